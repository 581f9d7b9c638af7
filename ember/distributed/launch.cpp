#include "ember/distributed/launch.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "ember/core/error.h"

extern char** environ;

namespace ember::distributed {
namespace {

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

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

}  // namespace

int launch(const LaunchOptions& o, const std::vector<std::string>& command) {
  EMBER_CHECK(!command.empty(), "[launch] expected a program to run");
  EMBER_CHECK(o.nproc_per_node >= 1 && o.nnodes >= 1 && o.node_rank >= 0 && o.node_rank < o.nnodes,
              "[launch] expected --nproc-per-node >= 1 and 0 <= --node-rank < --nnodes, got ",
              o.nproc_per_node, ", ", o.node_rank, " and ", o.nnodes);
  int world = o.nnodes * o.nproc_per_node;
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
    if (o.prefix_output) {
      relays.emplace_back(relay, out_pipe[0], rank, stdout);
      relays.emplace_back(relay, err_pipe[0], rank, stderr);
    }
  }

  int exit_code = 0;
  while (!rank_of.empty()) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = rank_of.find(pid);
    if (it == rank_of.end()) continue;
    int rank = it->second;
    rank_of.erase(it);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok || exit_code != 0) continue;
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    {
      std::lock_guard<std::mutex> lock(output_mutex);
      std::cerr << "ember launch: rank " << rank << " (pid " << pid << ") "
                << describe_status(status) << "; ending the other " << rank_of.size()
                << " local rank(s)" << std::endl;
    }
    for (auto& [p, r] : rank_of) ::kill(p, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.grace_seconds);
    while (!rank_of.empty() && std::chrono::steady_clock::now() < deadline) {
      pid_t done = ::waitpid(-1, &status, WNOHANG);
      if (done > 0)
        rank_of.erase(done);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& [p, r] : rank_of) ::kill(p, SIGKILL);
  }
  for (auto& t : relays) t.join();
  return exit_code;
}

}  // namespace ember::distributed
