// Crash-safe checkpoints, shown: a child process saves checkpoints in a loop and is killed with
// SIGKILL at random moments; after every kill the file loads, is one complete version, and no
// temporary file is left in the directory.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>

#include "tests/util/test_util.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDirVar = "EMBER_KILL_TEST_DIR";
constexpr const char* kPipeVar = "EMBER_KILL_TEST_PIPE";
constexpr const char* kStartVar = "EMBER_KILL_TEST_START";

// Every tensor of version v holds the value v, so a half-written mix of versions shows.
struct Trainee {
  std::shared_ptr<models::LeNet> model = nn::make<models::LeNet>();
  optim::SGD optimizer{model->parameters(), optim::SGDOptions(0.01).with_momentum(0.9)};
  Trainee() {
    Tensor loss =
        nn::functional::cross_entropy(model->forward(randn({2, 1, 28, 28})), randint(0, 10, {2}));
    loss.backward();
    optimizer.step();  // creates the momentum buffers, so the optimizer state is saved too
  }
  void fill(double v) {
    NoGradGuard no_grad;
    for (auto& [name, t] : model->state_dict()) t.fill_(v);
    for (auto& [name, t] : optimizer.state_dict())
      if (name.rfind("state.", 0) == 0) t.fill_(v);
  }
};

// The child: saves versions start, start+1, ... forever, reporting each on the pipe.
TEST(CheckpointKill, ChildWriter) {
  const char* dir = std::getenv(kDirVar);
  if (!dir) GTEST_SKIP() << "run by CheckpointKill.SurvivesSigkillAtRandomMoments";
  int pipe_fd = std::atoi(std::getenv(kPipeVar));
  int64_t version = std::atoll(std::getenv(kStartVar));
  Trainee t;
  std::string path = (fs::path(dir) / "checkpoint.safetensors").string();
  for (;; ++version) {
    t.fill(static_cast<double>(version));
    io::save_checkpoint(path, *t.model, t.optimizer, {{"version", std::to_string(version)}});
    char byte = 1;
    if (::write(pipe_fd, &byte, 1) != 1) return;
  }
}

TEST(CheckpointKill, SurvivesSigkillAtRandomMoments) {
  fs::path dir = fs::temp_directory_path() / ("ember_kill_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path path = dir / "checkpoint.safetensors";
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::mt19937 rng(1234);
  Trainee reader;
  int64_t next_version = 0;
  int strays_before_load = 0;
  constexpr int kKills = 60;
  for (int kill_no = 0; kill_no < kKills; ++kill_no) {
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // A fresh exec of this binary, running only the writer: nothing of the parent's threads or
      // locks comes along.
      ::dup2(fds[1], 100);
      ::setenv(kDirVar, dir.c_str(), 1);
      ::setenv(kPipeVar, "100", 1);
      ::setenv(kStartVar, std::to_string(next_version).c_str(), 1);
      ::execl(self.c_str(), self.c_str(), "--gtest_filter=CheckpointKill.ChildWriter", nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    // Wait for the child's first save, then kill it at a random moment of the saves that follow
    // (a save takes a few milliseconds, mostly writing and flushing).
    char byte;
    ssize_t got = ::read(fds[0], &byte, 1);
    ASSERT_EQ(got, 1) << "the writer died before its first save";
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    int64_t reported = 0;
    while (::read(fds[0], &byte, 1) == 1) ++reported;  // saves completed after the first
    ::close(fds[0]);

    // A writer killed between naming its finished temporary file and renaming it leaves a
    // complete stray; loading the checkpoint removes it (Note [Temporary files of a killed
    // writer]). Counted, to show how rare it is.
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path() != path) ++strays_before_load;
    // The file is exactly one complete version, no older than what was confirmed.
    io::Metadata meta = io::load_checkpoint(path.string(), *reader.model, reader.optimizer);
    int64_t v = std::stoll(meta.at("version"));
    // The child confirmed versions next_version .. next_version + reported; one more may have
    // landed between its last save and its report.
    int64_t confirmed = next_version + reported;
    EXPECT_TRUE(v == confirmed || v == confirmed + 1)
        << "kill " << kill_no << ": loaded version " << v << ", confirmed " << confirmed;
    for (auto& [name, t] : reader.model->state_dict())
      EXPECT_TRUE(testing::all_close(t, full_like(t, static_cast<double>(v)), 0, 0))
          << "kill " << kill_no << ": " << name << " is not entirely version " << v;
    next_version = confirmed + 2;  // past anything the killed child may have written

    std::vector<std::string> others;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path() != path) others.push_back(e.path().filename().string());
    EXPECT_TRUE(others.empty()) << "kill " << kill_no << ": left behind " << others.size()
                                << " file(s), e.g. " << (others.empty() ? "" : others[0]);
  }
  std::cout << "[          ] " << kKills << " kills; a complete stray was present before "
            << strays_before_load << " of the loads, and none after any\n";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember
