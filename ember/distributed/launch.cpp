#include "ember/distributed/launch.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "ember/core/error.h"

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

std::string signal_text(int signal) {
  return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by " + signal_text(WTERMSIG(status));
  return "stopped";
}

// One write for the line: ranks write to the same stderr, and a line written in pieces (as
// std::cerr does) interleaves with theirs.
void report(const std::string& line) {
  std::lock_guard<std::mutex> lock(output_mutex);
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

struct Ended {
  pid_t pid;
  int rank;
  int status;
};

// Every rank that has ended since the last call, removed from `running`.
std::vector<Ended> reap(std::map<pid_t, int>& running) {
  std::vector<Ended> ended;
  for (auto it = running.begin(); it != running.end();) {
    int status = 0;
    pid_t r = ::waitpid(it->first, &status, WNOHANG);
    if (r == it->first || (r < 0 && errno == ECHILD)) {
      ended.push_back({it->first, it->second, r < 0 ? 0 : status});
      it = running.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

// Note [Signals to the launcher]: SIGINT, SIGTERM and SIGHUP sent to the launcher reach every
// rank, as with torchrun, so that stopping a job (a scheduler's SIGTERM, ^C) leaves no rank
// running; the launcher then ends with 128 + the signal. The handler may only make
// async-signal-safe calls: it reads the running ranks' pids from a fixed array.
constexpr int kMaxLocalRanks = 1024;
std::array<std::atomic<pid_t>, kMaxLocalRanks> g_pids{};
std::atomic<int> g_forwarded{0};

void forward_signal(int signal) {
  g_forwarded.store(signal);
  for (auto& p : g_pids)
    if (pid_t pid = p.load(); pid > 0) ::kill(pid, signal);
}

// Installs forward_signal for the launch's duration and restores the previous handlers after.
class ForwardSignals {
 public:
  ForwardSignals() {
    g_forwarded.store(0);
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &previous_[i]);
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
    for (auto& p : g_pids) p.store(0);
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

}  // namespace

int launch(const LaunchOptions& o, const std::vector<std::string>& command) {
  EMBER_CHECK(!command.empty(), "[launch] expected a program to run");
  EMBER_CHECK(o.nproc_per_node >= 1 && o.nnodes >= 1 && o.node_rank >= 0 && o.node_rank < o.nnodes,
              "[launch] expected --nproc-per-node >= 1 and 0 <= --node-rank < --nnodes, got ",
              o.nproc_per_node, ", ", o.node_rank, " and ", o.nnodes);
  EMBER_CHECK(o.nproc_per_node <= kMaxLocalRanks, "[launch] at most ", kMaxLocalRanks,
              " ranks per node, got --nproc-per-node ", o.nproc_per_node);
  int world = o.nnodes * o.nproc_per_node;
  ForwardSignals forward_signals;
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (key == "RANK" || key == "LOCAL_RANK" || key == "WORLD_SIZE" || key == "MASTER_ADDR" ||
        key == "MASTER_PORT" || key == "LOCAL_WORLD_SIZE" || key == "GROUP_RANK")
      continue;
    base_env.push_back(kv);
  }
  std::map<pid_t, int> rank_of;  // running children
  std::vector<std::thread> relays;
  for (int local = 0; local < o.nproc_per_node; ++local) {
    int rank = o.node_rank * o.nproc_per_node + local;
    std::vector<std::string> env = base_env;
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(local));
    env.push_back("WORLD_SIZE=" + std::to_string(world));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node));
    env.push_back("GROUP_RANK=" + std::to_string(o.node_rank));
    env.push_back("MASTER_ADDR=" + o.master_addr);
    env.push_back("MASTER_PORT=" + std::to_string(o.master_port));
    std::vector<char*> envp, argv;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = command;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (o.prefix_output) {
      EMBER_CHECK(::pipe2(out_pipe, O_CLOEXEC) == 0 && ::pipe2(err_pipe, O_CLOEXEC) == 0,
                  "[launch] pipe: ", std::strerror(errno));
      posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
      posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    }
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (o.prefix_output) {
      ::close(out_pipe[1]);
      ::close(err_pipe[1]);
    }
    if (rc != 0) {
      for (auto& [p, r] : rank_of) ::kill(p, SIGKILL);
      for (auto& [p, r] : rank_of) ::waitpid(p, nullptr, 0);
      for (auto& t : relays) t.join();
      EMBER_FAIL("[launch] cannot start '", command[0], "' for rank ", rank, ": ",
                 std::strerror(rc));
    }
    rank_of[pid] = rank;
    g_pids[static_cast<size_t>(local)].store(pid);
    if (o.prefix_output) {
      relays.emplace_back(relay, out_pipe[0], rank, stdout);
      relays.emplace_back(relay, err_pipe[0], rank, stderr);
    }
  }

  int exit_code = 0;
  std::optional<Clock::time_point> kill_at;  // after a failure or a signal: SIGKILL what is left
  bool told_signal = false;
  auto end_others = [&](int signal) {
    for (auto& [p, r] : rank_of) ::kill(p, signal);
    if (!kill_at) kill_at = Clock::now() + std::chrono::seconds(o.grace_seconds);
  };
  // Polled, not blocking: a forwarded signal or the grace period must be noticed while waiting.
  while (!rank_of.empty()) {
    if (int sig = g_forwarded.load(); sig != 0 && !told_signal) {
      told_signal = true;
      report("ember launch: got " + signal_text(sig) + ", passed it to " +
             std::to_string(rank_of.size()) + " local rank(s)");
      end_others(sig);
    }
    std::vector<Ended> ended = reap(rank_of);
    for (const Ended& e : ended)
      g_pids[static_cast<size_t>(e.rank - o.node_rank * o.nproc_per_node)].store(0);
    if (ended.empty()) {
      if (kill_at && Clock::now() > *kill_at) end_others(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (exit_code != 0 || told_signal) continue;
    // Ranks reaped together: one killed by a signal is the likelier cause of the others' errors.
    const Ended* failed = nullptr;
    for (const Ended& e : ended)
      if (!(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) &&
          (!failed || (WIFSIGNALED(e.status) && !WIFSIGNALED(failed->status))))
        failed = &e;
    if (!failed) continue;
    exit_code =
        WIFEXITED(failed->status) ? WEXITSTATUS(failed->status) : 128 + WTERMSIG(failed->status);
    report("ember launch: rank " + std::to_string(failed->rank) + " (pid " +
           std::to_string(failed->pid) + ") " + describe_status(failed->status) +
           "; ending the other " + std::to_string(rank_of.size()) + " local rank(s)");
    end_others(SIGTERM);
  }
  if (int sig = g_forwarded.load(); sig != 0) exit_code = 128 + sig;
  for (auto& t : relays) t.join();
  return exit_code;
}

}  // namespace ember::distributed
