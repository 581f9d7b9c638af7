// Processes, as torch.multiprocessing starts them: Process (start, join, exitcode, terminate) and
// spawn(), which runs a function in N processes and turns the first failure anywhere into an
// exception in the parent that names the process and what happened to it.
//
// Start methods. Fork (the default on the CPU) runs a std::function in a forked copy of the
// program; ember's own state survives the fork (Note [Fork safety], core/fork.h), and tensors
// shared before it (Tensor::share_memory_) are the same memory in parent and child. Spawn execs a
// fresh copy of the program, which is the only way to use CUDA in workers once the parent has
// started it; the child cannot receive a closure, so it runs an entry point registered by name:
//
//   void worker(int index, const std::vector<std::string>& args) { ... }
//   EMBER_MULTIPROCESSING_ENTRY(worker);
//   int main(int argc, char** argv) {
//     ember::multiprocessing::init(argc, argv);  // first: in a spawned child, runs the entry,
//     exits ember::multiprocessing::spawn(2, "worker", {"--lr", "0.1"}, StartMethod::Spawn);
//   }
//
// Every child gets its own random numbers: its default generator is seeded with
// base + index, where base is drawn from the parent's default generator when the group starts
// (so a seeded parent gives reproducible children). A child dies with its parent (PDEATHSIG), so
// no worker outlives a killed parent; a group never leaves a zombie behind.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/error.h"

namespace ember::multiprocessing {

enum class StartMethod { Fork, Spawn };

/// An entry point for the spawn start method: its index in the group and the arguments given.
using EntryFn = void (*)(int index, const std::vector<std::string>& args);

/// Names `fn` so that spawned children can run it; returns true (for static registration).
bool register_entry(const std::string& name, EntryFn fn);

/// Registers the function `fn` under its own name.
#define EMBER_MULTIPROCESSING_ENTRY(fn)                \
  static const bool ember_multiprocessing_entry_##fn = \
      ::ember::multiprocessing::register_entry(#fn, fn)

/// Call at the top of main(). In a child started with StartMethod::Spawn it runs the registered
/// entry point and ends the process (exit code 0, or 1 after reporting the exception to the
/// parent); anywhere else it records argv (needed to spawn) and returns.
void init(int argc, char** argv);

/// A child process failed: it threw, exited with a non-zero code or was killed by a signal.
class ProcessError : public Error {
 public:
  ProcessError(std::string message, int index, pid_t pid, int exitcode)
      : Error(std::move(message)), index_(index), pid_(pid), exitcode_(exitcode) {}
  /// The failed process's index in its group.
  int index() const { return index_; }
  pid_t pid() const { return pid_; }
  /// As Process::exitcode(): the exit code, or minus the signal that killed it.
  int exitcode() const { return exitcode_; }

 private:
  int index_;
  pid_t pid_;
  int exitcode_;
};

/// One child process (multiprocessing.Process).
class Process {
 public:
  /// Fork start method: the child runs fn().
  explicit Process(std::function<void()> fn);
  /// Spawn start method: the child is a fresh exec of this program running entry(index, args).
  Process(std::string entry, int index, std::vector<std::string> args = {});
  /// Kills and reaps a child still running.
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  Process(Process&&) noexcept;
  Process& operator=(Process&&) noexcept;

  void start();
  /// Waits until the child ends, or for `timeout_s` seconds when given; true when it has ended.
  bool join(std::optional<double> timeout_s = std::nullopt);
  bool is_alive();
  /// std::nullopt while running (or not started); the exit code; minus the signal that killed it.
  std::optional<int> exitcode();
  /// SIGTERM (terminate) or SIGKILL (kill) to a running child.
  void terminate();
  void kill();
  pid_t pid() const;
  /// What the child reported before failing ("ember::Error: [op] ..."), "" when nothing.
  std::string error();
  /// The generator seed the child starts from (set by the group; default: drawn at start()).
  void set_seed(uint64_t seed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Processes started together (torch.multiprocessing.ProcessContext).
class ProcessContext {
 public:
  explicit ProcessContext(std::vector<Process> processes);
  /// Terminates and reaps children still running.
  ~ProcessContext();
  ProcessContext(ProcessContext&&) = default;
  /// Waits up to `timeout_s` (forever when not given) for every process; true when all ended
  /// well. The first failure terminates the others, reaps them, and throws ProcessError.
  bool join(std::optional<double> timeout_s = std::nullopt);
  std::vector<Process>& processes() { return processes_; }
  std::vector<pid_t> pids() const;

 private:
  std::vector<Process> processes_;
};

/// torch.multiprocessing.spawn with the fork start method: runs fn(i) for i in [0, nprocs) in
/// child processes and waits for them (join = false returns the running group instead).
ProcessContext start_processes(int nprocs, std::function<void(int)> fn);
void spawn(int nprocs, std::function<void(int)> fn);
/// The same, running a registered entry point with either start method.
ProcessContext start_processes(int nprocs, const std::string& entry,
                               const std::vector<std::string>& args = {},
                               StartMethod method = StartMethod::Spawn);
void spawn(int nprocs, const std::string& entry, const std::vector<std::string>& args = {},
           StartMethod method = StartMethod::Spawn);

/// The signal's name: "SIGSEGV".
std::string signal_name(int signal);

/// Note [Ends across exec]: a queue or connection end is named in a spawned child's arguments by
/// "ember-fds:" and its descriptors ("ember-fds:5,6"). Process::start keeps the descriptors named
/// by such arguments open across exec; Connection::from_handle and Queue::from_handle take them
/// over in the child. The descriptor numbers in `arg`, or nothing when it is not such a handle.
inline constexpr const char* kHandlePrefix = "ember-fds:";
std::vector<int> handle_descriptors(const std::string& arg);

}  // namespace ember::multiprocessing
