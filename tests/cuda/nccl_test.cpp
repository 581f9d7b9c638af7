// The NCCL backend on one GPU (NCCL refuses two ranks on one GPU: world size 1), and Gloo ranks as
// threads all-reducing GPU tensors through the host.
#include <gtest/gtest.h>

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
