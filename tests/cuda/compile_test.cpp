// ember::compile on the GPU: a traced call replays on CUDA tensors as eager ember computes it
// (the same kernels, so the same bits); fusion is the CPU's only, so nothing fuses there yet.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using testing::gpu;

std::vector<Tensor> step(const std::vector<Tensor>& in) {
  Tensor h = gelu(matmul(in[0], in[1]));
  return {softmax((h * 2.0 + 1.0).tanh(), -1)};
}

TEST(CudaCompile, AGraphReplaysOnTheGpuAsEager) {
  EMBER_REQUIRE_CUDA();
  CompiledFunction f = compile(step);
  manual_seed(0);
  f({randn({64, 32}).to(gpu()), randn({32, 16}).to(gpu())});
  for (int i = 0; i < 2; ++i) {
    std::vector<Tensor> in = {randn({64, 32}).to(gpu()), randn({32, 16}).to(gpu())};
    Tensor got = f(in)[0];
    ASSERT_TRUE(got.is_cuda());
    EXPECT_TRUE(equal(got.cpu(), step(in)[0].cpu()));
  }
  EXPECT_EQ(f.stats().graph_runs, 2);
  EXPECT_EQ(f.stats().fused_ops, 0);
}

}  // namespace
}  // namespace ember
