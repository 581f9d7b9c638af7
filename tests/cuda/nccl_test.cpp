// The NCCL backend on one GPU (NCCL refuses two ranks on one GPU: world size 1), and Gloo ranks as
// threads all-reducing GPU tensors through the host.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#if EMBER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "ember/backend/cuda/stream.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/process_group_nccl.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember::distributed {
namespace {

using testing::values;

TEST(Nccl, WorldSizeOneCollectivesOnTheGpu) {
  EMBER_REQUIRE_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "needs ember built with NCCL";
  init_process_group("nccl", std::make_shared<HashStore>(std::chrono::seconds(60)), 1, 0);
  EXPECT_EQ(default_group().backend(), "nccl");
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32}) {
    Tensor t = arange(10, TensorOptions(dt).with_device(testing::gpu()));
    all_reduce(t, ReduceOp::SUM);
    EXPECT_EQ(values(t.cpu()), values(arange(10, dt))) << dt;
    broadcast(t, 0);
    std::vector<Tensor> out = {zeros_like(t)};
    all_gather(out, t);
    EXPECT_EQ(values(out[0].cpu()), values(arange(10, dt))) << dt;
  }
  EXPECT_THROW_WITH(all_reduce(zeros({2})), "the nccl backend takes tensors on this rank's GPU");
  barrier();
  destroy_process_group();
}

#if EMBER_WITH_CUDA
// Holds a stream on the host until released (also when the test fails half-way).
struct StreamHold {
  explicit StreamHold(cudaStream_t s) : stream(s) {
    EXPECT_EQ(cudaLaunchHostFunc(stream, &StreamHold::hold, &released), cudaSuccess);
  }
  ~StreamHold() {
    released = true;
    cudaStreamSynchronize(stream);
  }
  static void CUDART_CB hold(void* released) {
    while (!static_cast<std::atomic<bool>*>(released)->load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cudaStream_t stream;
  std::atomic<bool> released{false};
};
#endif

// Note [NCCL watchdog]: a collective that does not complete within the group's timeout fails
// its Work naming the operation and its sequence number, and the group refuses further work.
// With one rank nothing can hang, so the caller's stream is held on the host instead.
TEST(Nccl, ACollectiveThatNeverCompletesTimesOutNamingItsSequenceNumber) {
  EMBER_REQUIRE_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "needs ember built with NCCL";
#if EMBER_WITH_CUDA
  init_process_group("nccl", std::make_shared<HashStore>(std::chrono::seconds(60)), 1, 0,
                     std::chrono::milliseconds(300));
  Tensor t = ones({4}, TensorOptions(kFloat32).with_device(testing::gpu()));
  all_reduce(t);  // #1 (#0 is init_process_group's barrier)
  {
    StreamHold hold(reinterpret_cast<cudaStream_t>(cuda::current_stream().handle()));
    std::shared_ptr<Work> work = all_reduce(t, ReduceOp::SUM, nullptr, /*async_op=*/true);  // #2
    work->wait();  // stream-ordered: does not block the host
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!work->is_completed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(work->is_completed()) << "the watchdog did not fail the collective";
    EXPECT_THROW_WITH(work->wait(),
                      "[all_reduce] collective #2 on rank 0 of 1 (nccl) timed out after 300 ms");
    EXPECT_THROW_WITH(all_reduce(t), "was aborted by an earlier failure");
  }
  destroy_process_group();
#endif
}

TEST(Nccl, GlooThreadsReduceGpuTensorsThroughTheHost) {
  EMBER_REQUIRE_CUDA();
  run_threads(2, [](int rank) {
    Tensor g = full({4}, static_cast<double>(rank + 1),
                    TensorOptions(kFloat32).with_device(testing::gpu()));
    Tensor host = g.cpu();
    all_reduce(host);
    g.copy_(host);
    EXPECT_EQ(values(g.cpu()), (std::vector<double>{3, 3, 3, 3}));
  });
}

}  // namespace
}  // namespace ember::distributed
