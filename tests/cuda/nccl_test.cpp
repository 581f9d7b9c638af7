// The NCCL backend on one GPU (NCCL refuses two ranks on one GPU: world size 1, or rank 0 of 2
// alone, for start-ups that fail), and Gloo ranks as threads all-reducing GPU tensors through the
// host.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#if EMBER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "ember/backend/cuda/stream.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/fsdp.h"
#include "ember/distributed/process_group_nccl.h"
#include "ember/distributed/startup_watch.h"
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

// The flat collectives and an FSDP training step on the GPU over NCCL (one rank): the step
// equals the unwrapped model's, in both layouts (flat parameters and FSDP2's per parameter).
TEST(Nccl, FlatCollectivesAndAnFsdpStepOnTheGpu) {
  EMBER_REQUIRE_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "needs ember built with NCCL";
  init_process_group("nccl", std::make_shared<HashStore>(std::chrono::seconds(60)), 1, 0);
  TensorOptions gpu = TensorOptions(kFloat32).with_device(testing::gpu());
  Tensor in = arange(6, gpu), out = zeros({6}, gpu);
  all_gather_into_tensor(out, in);
  EXPECT_EQ(values(out.cpu()), values(arange(6, kFloat32)));
  reduce_scatter_tensor(out, in, ReduceOp::SUM);
  EXPECT_EQ(values(out.cpu()), values(arange(6, kFloat32)));
  for (bool per_parameter : {false, true}) {
    manual_seed(4);
    auto plain = std::make_shared<nn::Linear>(8, 3);
    auto sharded = std::make_shared<nn::Linear>(8, 3);
    sharded->load_state_dict(plain->state_dict());
    plain->to(testing::gpu());
    sharded->to(testing::gpu());
    FsdpOptions options;
    options.per_parameter = per_parameter;
    FSDP fsdp(sharded, options);
    Tensor x = randn({5, 8}, gpu);
    plain->forward(x).pow(2).sum().backward();
    fsdp.forward(x).pow(2).sum().backward();
    std::vector<Tensor> grads;
    for (const Tensor& p : fsdp.parameters()) grads.push_back(p.grad().cpu().reshape({-1}));
    Tensor got = cat(grads, 0).narrow(0, 0, 27);
    Tensor want = cat({plain->weight.grad().cpu().reshape({-1}), plain->bias.grad().cpu()}, 0);
    EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << per_parameter;
  }
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
                     // NCCL's start-up on a real GPU takes about a second, within the same timeout.
                     std::chrono::milliseconds(5000));
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
                      "[all_reduce] collective #2 on rank 0 of 1 (nccl) timed out after 5000 ms");
    EXPECT_THROW_WITH(all_reduce(t), "was aborted by an earlier failure");
  }
  destroy_process_group();
#endif
}

// Note [NCCL non-blocking communicator]: a start-up that a rank never joins ends at the group's
// timeout naming that rank, instead of blocking in ncclCommInitRank for ever. One GPU suffices:
// only rank 0 of 2 starts. The aborted communicator leaves NCCL usable: a group starts after it.
TEST(Nccl, AStartUpARankNeverJoinsTimesOutNamingIt) {
  EMBER_REQUIRE_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "needs ember built with NCCL";
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(
      init_process_group("nccl", std::make_shared<HashStore>(std::chrono::seconds(60)), 2, 0,
                         std::chrono::seconds(2)),
      "[init_process_group] rank 0 of 2 could not start the NCCL communicator: rank "
      "1 did not arrive within 2000 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_FALSE(is_initialized());
  init_process_group("nccl", std::make_shared<HashStore>(std::chrono::seconds(60)), 1, 0);
  Tensor t = ones({3}, TensorOptions(kFloat32).with_device(testing::gpu()));
  all_reduce(t);
  EXPECT_EQ(values(t.cpu()), (std::vector<double>{1, 1, 1}));
  destroy_process_group();
}

// A rank that joined the rendezvous and died (its FileStore lock released, as when its process
// dies) is named within seconds, long before the group's 60-s timeout.
TEST(Nccl, ARankThatDiesDuringStartUpIsNamedWithinSeconds) {
  EMBER_REQUIRE_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "needs ember built with NCCL";
  std::string dir = ::testing::TempDir() + "/nccl_startup_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto timeout = std::chrono::seconds(60);
  {
    // What rank 1's init_process_group does before NCCL's start-up: register, sign in.
    auto rank1 = std::make_shared<FileStore>(dir, timeout);
    rank1->register_rank(1);
    StartupWatch signed_in(std::make_shared<PrefixStore>("default_pg", rank1),
                           "the NCCL communicator", 1, 2, timeout);
  }  // and dies
  auto store = std::make_shared<FileStore>(dir, timeout);
  store->register_rank(0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(
      init_process_group("nccl", store, 2, 0, timeout),
      "rank 1 exited or died without leaving the group (as the rendezvous store saw)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  std::filesystem::remove_all(dir);
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
