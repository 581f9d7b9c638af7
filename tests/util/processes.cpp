#include "tests/util/processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ember::testing {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int log_counter = 0;

std::string fresh_log() {
  return ::testing::TempDir() + "/cmd_" + std::to_string(::getpid()) + "_" +
         std::to_string(log_counter++) + ".log";
}

}  // namespace

CommandResult run_command(const std::string& command, int timeout_seconds) {
  std::string log = fresh_log();
  std::string quoted;
  for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  int status = std::system(
      ("timeout " + std::to_string(timeout_seconds) + " sh -c '" + quoted + "' > " + log + " 2>&1")
          .c_str());
  std::string output = read_file(log);
  std::remove(log.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

int next_port() {
  static int n = 0;
  return 20000 + static_cast<int>(::getpid() % 1200) * 10 + (n++ % 10);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

BackgroundCommand::BackgroundCommand(const std::string& command) : log_(fresh_log()) {
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    std::string redirected = "exec > " + log_ + " 2>&1; " + command;
    ::execl("/bin/sh", "sh", "-c", redirected.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pid_ > 0) ::setpgid(pid_, pid_);  // either side may run first
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0 && !code_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::remove(log_.c_str());
}

std::optional<int> BackgroundCommand::wait(std::chrono::milliseconds timeout) {
  if (code_ || pid_ <= 0) return code_;
  int status = 0;
  if (wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout))
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return code_;
}

std::string BackgroundCommand::output() const { return read_file(log_); }

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) out.push_back(child);
  }
  return out;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace ember::testing
