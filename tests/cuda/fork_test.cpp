// CUDA in a child forked after CUDA started is a clear error, not a hang (Note [Fork safety]).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

TEST(CudaFork, UsingCudaInAForkedChildIsAnError) {
  EMBER_REQUIRE_CUDA();
  Tensor warm = ones({4}, testing::gpu());
  pid_t pid = fork();
  if (pid == 0) {
    int code = 1;
    try {
      Tensor t = ones({4}, testing::gpu());
    } catch (const Error& e) {
      code = std::string(e.what()).find("forked") != std::string::npos ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    std::_Exit(code);
  }
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "the forked child hung using CUDA";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(warm.cpu().sum().item<double>(), 4.0);  // the parent's CUDA is untouched
}

TEST(CudaFork, ShareMemoryOfACudaTensorIsAnError) {
  EMBER_REQUIRE_CUDA();
  Tensor t = ones({4}, testing::gpu());
  EXPECT_THROW_WITH(t.share_memory_(), "only CPU tensors");
}

}  // namespace
}  // namespace ember
