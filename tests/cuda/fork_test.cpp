// CUDA in a child forked after CUDA started is a clear error, not a hang (Note [Fork safety]).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

// Runs `child` in a forked child and returns its exit code; fails the test if it hangs.
int exit_code_in_child(const std::function<int()>& child) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 3;
    try {
      code = child();
    } catch (...) {
    }
    std::_Exit(code);
  }
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "the forked child hung using CUDA";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// 0 when `use_cuda` throws an ember::Error that names the fork, 1 when it does not throw, 2 when
// the error says something else.
int forked_error(const std::function<void()>& use_cuda) {
  try {
    use_cuda();
  } catch (const Error& e) {
    return std::string(e.what()).find("forked") != std::string::npos ? 0 : 2;
  }
  return 1;
}

TEST(CudaFork, UsingCudaInAForkedChildIsAnError) {
  EMBER_REQUIRE_CUDA();
  Tensor warm = ones({4}, testing::gpu());
  EXPECT_EQ(exit_code_in_child([] { return forked_error([] { ones({4}, testing::gpu()); }); }), 0);
  EXPECT_EQ(warm.cpu().sum().item<double>(), 4.0);  // the parent's CUDA is untouched
}

// Pinning goes to the driver without a device index: it checks the fork itself (a DataLoader with
// pin_memory in a forked worker would otherwise reach cudaHostAlloc), and is_pinned is false.
TEST(CudaFork, PinningInAForkedChildIsAnError) {
  EMBER_REQUIRE_CUDA();
  Tensor pinned = ones({4}).pin_memory();
  EXPECT_EQ(exit_code_in_child([] { return forked_error([] { ones({4}).pin_memory(); }); }), 0);
  EXPECT_EQ(exit_code_in_child([&] { return pinned.is_pinned() || ones({4}).is_pinned() ? 1 : 0; }),
            0);
  EXPECT_TRUE(pinned.is_pinned());
}

TEST(CudaFork, ShareMemoryOfACudaTensorIsAnError) {
  EMBER_REQUIRE_CUDA();
  Tensor t = ones({4}, testing::gpu());
  EXPECT_THROW_WITH(t.share_memory_(), "only CPU tensors");
}

}  // namespace
}  // namespace ember
