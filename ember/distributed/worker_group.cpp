#include "ember/distributed/worker_group.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "ember/core/error.h"
#include "ember/distributed/error_file.h"

extern char** environ;

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex output_mutex;

// Copies a rank's pipe to our stdout or stderr, a line at a time, each line prefixed.
void relay(int fd, int rank, FILE* out) {
  std::string pending;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::lock_guard<std::mutex> lock(output_mutex);
      std::fprintf(out, "[rank %d] %s\n", rank, pending.substr(0, nl).c_str());
      std::fflush(out);
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) {
    std::lock_guard<std::mutex> lock(output_mutex);
    std::fprintf(out, "[rank %d] %s\n", rank, pending.c_str());
    std::fflush(out);
  }
  ::close(fd);
}

// See Note [Signals to the launcher]. The handler may only make async-signal-safe calls: it reads
// the running ranks' pids from a fixed array, one slot per local rank.
constexpr int kMaxLocalRanks = 1024;
std::array<std::atomic<pid_t>, kMaxLocalRanks> g_pids{};
std::atomic<int> g_forwarded{0};
constexpr std::array<int, 3> kForwarded = {SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, 3> g_previous{};

void forward_signal(int signal) {
  g_forwarded.store(signal);
  for (auto& p : g_pids)
    if (pid_t pid = p.load(); pid > 0) ::kill(pid, signal);
}

// When the rank wrote its error file, if it did.
std::optional<std::chrono::system_clock::time_point> recorded_at(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<
      std::chrono::system_clock::duration>(std::chrono::seconds(st.st_mtim.tv_sec) +
                                           std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

// The ranks a failure's message names other than its own ("... failed: rank 1 exited or died").
std::set<int> ranks_named(const WorkerExit& e) {
  static const std::regex kRank(R"(\brank (\d+))");
  std::set<int> named;
  if (!e.error) return named;
  for (std::sregex_iterator it(e.error->begin(), e.error->end(), kRank), end; it != end; ++it)
    if (int r = std::stoi((*it)[1].str()); r != e.rank) named.insert(r);
  return named;
}

}  // namespace

bool WorkerExit::succeeded() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

int WorkerExit::exit_code() const {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string signal_text(int signal) {
  return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

std::string WorkerExit::describe() const {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by " + signal_text(WTERMSIG(status));
  return "stopped";
}

void report_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(output_mutex);
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

std::vector<std::string> launcher_environment() {
  static const std::set<std::string> kSet = {"RANK",
                                             "LOCAL_RANK",
                                             "WORLD_SIZE",
                                             "LOCAL_WORLD_SIZE",
                                             "GROUP_RANK",
                                             "GROUP_WORLD_SIZE",
                                             "MASTER_ADDR",
                                             "MASTER_PORT",
                                             "ROLE_RANK",
                                             "ROLE_WORLD_SIZE",
                                             "ROLE_NAME",
                                             "TORCHELASTIC_RESTART_COUNT",
                                             "TORCHELASTIC_MAX_RESTARTS",
                                             "TORCHELASTIC_RUN_ID",
                                             "TORCHELASTIC_ERROR_FILE"};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!kSet.count(kv.substr(0, kv.find('=')))) env.push_back(kv);
  }
  return env;
}

SignalForwarding::SignalForwarding() {
  g_forwarded.store(0);
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < kForwarded.size(); ++i) sigaction(kForwarded[i], &sa, &g_previous[i]);
}

SignalForwarding::~SignalForwarding() {
  for (size_t i = 0; i < kForwarded.size(); ++i) sigaction(kForwarded[i], &g_previous[i], nullptr);
}

int SignalForwarding::received() const { return g_forwarded.load(); }

WorkerGroup::WorkerGroup(const std::vector<std::string>& command,
                         const std::vector<WorkerSpec>& specs, bool prefix_output) {
  EMBER_CHECK(!command.empty(), "[launch] expected a program to run");
  std::vector<std::string> base_env = launcher_environment();
  for (const WorkerSpec& spec : specs) {
    EMBER_CHECK(spec.local_rank >= 0 && spec.local_rank < kMaxLocalRanks, "[launch] at most ",
                kMaxLocalRanks, " ranks per node, got local rank ", spec.local_rank);
    try {
      start(command, base_env, spec, prefix_output);
    } catch (...) {
      stop(SIGKILL, std::chrono::milliseconds(0));
      for (auto& t : relays_) t.join();
      relays_.clear();
      throw;
    }
  }
}

void WorkerGroup::start(const std::vector<std::string>& command,
                        const std::vector<std::string>& base_env, const WorkerSpec& spec,
                        bool prefix_output) {
  std::vector<std::string> env;
  for (const std::string& kv : base_env) {
    std::string key = kv.substr(0, kv.find('=') + 1);
    bool replaced = std::any_of(spec.env.begin(), spec.env.end(),
                                [&](const std::string& s) { return s.rfind(key, 0) == 0; });
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), spec.env.begin(), spec.env.end());
  if (!spec.error_file.empty()) env.push_back("TORCHELASTIC_ERROR_FILE=" + spec.error_file);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (prefix_output) {
    EMBER_CHECK(::pipe2(out_pipe, O_CLOEXEC) == 0 && ::pipe2(err_pipe, O_CLOEXEC) == 0,
                "[launch] pipe: ", std::strerror(errno));
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  }
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (prefix_output) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
  }
  if (rc != 0) {
    if (prefix_output) {
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
    }
    EMBER_FAIL("[launch] cannot start '", command[0], "' for rank ", spec.rank, ": ",
               std::strerror(rc));
  }
  running_.push_back({pid, spec.rank, spec.local_rank, spec.error_file});
  g_pids[static_cast<size_t>(spec.local_rank)].store(pid);
  if (prefix_output) {
    relays_.emplace_back(relay, out_pipe[0], spec.rank, stdout);
    relays_.emplace_back(relay, err_pipe[0], spec.rank, stderr);
  }
}

WorkerGroup::~WorkerGroup() {
  try {
    stop(SIGKILL, std::chrono::milliseconds(0));
  } catch (...) {
    // Destructors never throw; SIGKILL and waitpid do not fail for our own children.
  }
  for (auto& t : relays_) t.join();
}

std::vector<WorkerExit> WorkerGroup::poll() {
  std::vector<WorkerExit> ended;
  for (auto it = running_.begin(); it != running_.end();) {
    int status = 0;
    pid_t r = ::waitpid(it->pid, &status, WNOHANG);
    if (r == it->pid || (r < 0 && errno == ECHILD)) {
      WorkerExit e;
      e.rank = it->rank;
      e.local_rank = it->local_rank;
      e.pid = it->pid;
      e.status = r < 0 ? 0 : status;
      e.when = std::chrono::system_clock::now();
      if (!e.succeeded() && !it->error_file.empty()) {
        e.error = read_error_file(it->error_file);
        if (auto at = recorded_at(it->error_file); at && e.error) e.when = std::min(e.when, *at);
      }
      ended.push_back(std::move(e));
      g_pids[static_cast<size_t>(it->local_rank)].store(0);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

bool WorkerGroup::failing(const std::vector<WorkerExit>& failures) const {
  std::set<int> named;
  for (const WorkerExit& e : failures) named.merge(ranks_named(e));
  return std::any_of(running_.begin(), running_.end(), [&](const Running& r) {
    return named.count(r.rank) || recorded_at(r.error_file).has_value();
  });
}

std::vector<WorkerExit> WorkerGroup::stop(int signal, std::chrono::milliseconds grace) {
  std::vector<WorkerExit> ended;
  for (const Running& r : running_) ::kill(r.pid, signal);
  auto kill_at = Clock::now() + grace;
  bool killed = signal == SIGKILL;
  while (!running_.empty()) {
    std::vector<WorkerExit> now = poll();
    ended.insert(ended.end(), now.begin(), now.end());
    if (running_.empty()) break;
    if (!killed && Clock::now() >= kill_at) {
      for (const Running& r : running_) ::kill(r.pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ended;
}

void root_cause_first(std::vector<WorkerExit>& failures) {
  std::set<int> failed;
  for (const WorkerExit& e : failures) failed.insert(e.rank);
  auto names_a_failed_rank = [&](const WorkerExit& e) {
    std::set<int> named = ranks_named(e);
    return std::any_of(named.begin(), named.end(), [&](int r) { return failed.count(r) > 0; });
  };
  std::stable_sort(failures.begin(), failures.end(), [&](const WorkerExit& a, const WorkerExit& b) {
    return std::make_tuple(names_a_failed_rank(a), a.when, !WIFSIGNALED(a.status)) <
           std::make_tuple(names_a_failed_rank(b), b.when, !WIFSIGNALED(b.status));
  });
}

WatchResult watch(WorkerGroup& group, const SignalForwarding& signals,
                  const std::function<bool()>& interrupt, std::chrono::milliseconds interval,
                  std::chrono::milliseconds settle) {
  // Polled, not blocking: a forwarded signal or the interrupt must be noticed while waiting.
  auto next_interrupt_check = Clock::now();
  std::vector<WorkerExit> failed;
  Clock::time_point first_failure;
  while (group.running() > 0) {
    if (int sig = signals.received(); sig != 0) return {WatchResult::kSignaled, {}, sig};
    std::vector<WorkerExit> ended = group.poll();
    for (WorkerExit& e : ended)
      if (!e.succeeded()) {
        if (failed.empty()) first_failure = Clock::now();
        failed.push_back(std::move(e));
      }
    if (!failed.empty()) {
      // See Note [The rank that failed first]: the culprit may still be on its way out.
      auto waited = Clock::now() - first_failure;
      if (waited >= 5 * settle || (waited >= settle && !group.failing(failed))) break;
    } else if (interrupt && Clock::now() >= next_interrupt_check) {
      if (interrupt()) return {WatchResult::kInterrupted, {}, 0};
      next_interrupt_check = Clock::now() + interval;
    }
    if (ended.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (failed.empty()) return {WatchResult::kSucceeded, {}, 0};
  root_cause_first(failed);
  return {WatchResult::kFailed, failed, 0};
}

}  // namespace ember::distributed
