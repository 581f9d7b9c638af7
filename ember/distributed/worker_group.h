// The ranks of one node as child processes, started together, watched and stopped together: the
// launcher's start-group / watch / stop-group, shared by `ember launch` and the elastic agent.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ember::distributed {

/// One rank to start: its numbers and the variables it gets beside the launcher's environment.
struct WorkerSpec {
  int rank = 0;
  int local_rank = 0;
  std::vector<std::string> env;  // "NAME=value", replacing the launcher's variable of that name
  /// Where the rank records why it failed (its TORCHELASTIC_ERROR_FILE); empty: nowhere.
  std::string error_file;
};

/// How a rank ended.
struct WorkerExit {
  int rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  int status = 0;  // waitpid's
  /// The message the rank recorded in its error file, if it did.
  std::optional<std::string> error;
  /// When it failed: when it recorded its error, else when its end was seen. A rank's exit can
  /// come long after its failure (AddressSanitizer's leak check runs at exit), and the peers it
  /// left may end first.
  std::chrono::system_clock::time_point when;
  bool succeeded() const;
  /// The exit code, or 128 + the signal that killed it.
  int exit_code() const;
  /// "exited with code 3", "was killed by signal 9 (Killed)".
  std::string describe() const;
};

/// "signal 9 (Killed)".
std::string signal_text(int signal);

/// Writes one line to stderr in one write, so that it does not interleave with the ranks' lines.
void report_line(const std::string& line);

/// The launcher's environment without the variables a launcher sets for its ranks (RANK,
/// WORLD_SIZE, MASTER_ADDR, TORCHELASTIC_RESTART_COUNT, ...), which must not leak from an outer
/// job.
std::vector<std::string> launcher_environment();

/// Note [Signals to the launcher]: while a SignalForwarding lives, SIGINT, SIGTERM and SIGHUP sent
/// to the process reach every rank of every WorkerGroup, as with torchrun, so that stopping a job
/// (a scheduler's SIGTERM, ^C) leaves no rank running; the launcher then ends with 128 + signal.
class SignalForwarding {
 public:
  SignalForwarding();
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;
  /// The last signal passed on, 0 when none came.
  int received() const;
};

class WorkerGroup {
 public:
  /// Starts `command` (program and arguments, looked up in PATH) once per spec. With
  /// prefix_output every line a rank writes gets "[rank R] " in front. If one cannot be started,
  /// the ones already running are killed and an ember::Error names the rank.
  WorkerGroup(const std::vector<std::string>& command, const std::vector<WorkerSpec>& specs,
              bool prefix_output);
  /// Kills (SIGKILL) and reaps what still runs; never throws.
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  /// The ranks that ended since the last call (not blocking).
  std::vector<WorkerExit> poll();
  size_t running() const { return running_.size(); }
  /// Whether a running rank recorded an error, or a failure's message names it: it is failing too,
  /// and ends soon.
  bool failing(const std::vector<WorkerExit>& failures) const;
  /// Sends `signal` to every running rank, SIGKILL after `grace`, and returns once all ended,
  /// with those that ended meanwhile.
  std::vector<WorkerExit> stop(int signal, std::chrono::milliseconds grace);

 private:
  void start(const std::vector<std::string>& command, const std::vector<std::string>& base_env,
             const WorkerSpec& spec, bool prefix_output);
  struct Running {
    pid_t pid;
    int rank;
    int local_rank;
    std::string error_file;
  };
  std::vector<Running> running_;
  std::vector<std::thread> relays_;
};

/// What ended a watch.
struct WatchResult {
  enum Kind { kSucceeded, kFailed, kSignaled, kInterrupted } kind = kSucceeded;
  /// kFailed: the root cause first (root_cause_first), then the failures it brought.
  std::vector<WorkerExit> failures;
  int signal = 0;  // kSignaled
};

/// Note [The rank that failed first]: when one rank fails, its peers fail in their next collective,
/// and all of them end within moments, in no reliable order (under AddressSanitizer the culprit's
/// exit, with its leak check, often comes last). Orders `failures` so that the cause comes first:
/// failures whose recorded message names another failed rank ("rank 1 exited or died") after
/// those that name none, then by when each failed (WorkerExit::when), a rank killed by a signal
/// before one that exited at the same moment.
void root_cause_first(std::vector<WorkerExit>& failures);

/// Waits until every rank ended well, one failed, `signals` received one, or `interrupt` (called
/// every `interval`, may be empty) returns true. Ranks that ended well are dropped from the group.
/// After a first failure it gathers the failures that follow: until every rank ended, for at
/// most `settle`, and up to 5 `settle`s while a running rank is known to be failing (it recorded
/// an error, or a failed rank's message names it); see Note [The rank that failed first].
WatchResult watch(WorkerGroup& group, const SignalForwarding& signals,
                  const std::function<bool()>& interrupt = {},
                  std::chrono::milliseconds interval = std::chrono::milliseconds(100),
                  std::chrono::milliseconds settle = std::chrono::milliseconds(1000));

}  // namespace ember::distributed
