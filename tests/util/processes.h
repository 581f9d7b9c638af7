// Helpers for tests that run programs: a command run to its end under a time limit, a command
// left running in the background (killed with its process group at the end of the test), ports.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember::testing {

struct CommandResult {
  int code;            // the exit code; -1 when it did not exit (killed, or past the limit)
  std::string output;  // stdout and stderr together
};

/// Runs `command` with sh under `timeout SECONDS`.
CommandResult run_command(const std::string& command, int timeout_seconds = 60);

/// A port per call, spread by pid so that parallel test processes do not collide, and below
/// Linux's ephemeral range (32768 and up), where another test's sockets take their ports.
int next_port();

/// Polls `done` every 20 ms until it returns true (true) or `timeout` passes (false).
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);

/// `command` run by sh in the background, in a process group of its own, its output into a
/// file; killed (the whole group, SIGKILL) and reaped when destroyed, if it still runs.
class BackgroundCommand {
 public:
  explicit BackgroundCommand(const std::string& command);
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;
  pid_t pid() const { return pid_; }
  /// Its exit code once it ended within `timeout` (-1 for a signal), else nothing.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  std::string output() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> code_;
  std::string log_;
};

/// The processes whose parent is `pid` (from /proc).
std::vector<pid_t> children_of(pid_t pid);

/// The lines of a file ("" when it is missing).
std::vector<std::string> read_lines(const std::string& path);

}  // namespace ember::testing
