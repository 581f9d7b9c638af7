// The reproductions of issue 13 on the GPU: PyTorch 1.13's answers from the CUDA kernels too.
#include <gtest/gtest.h>

#include <algorithm>

#include "ember/nn/functional.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace F = ember::nn::functional;

Tensor bools_on_gpu(std::initializer_list<bool> v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(kBool));
  std::copy(v.begin(), v.end(), static_cast<bool*>(t.data_ptr()));
  return t.to(gpu());
}

TEST(CudaTorchParity, LogSoftmaxKeepsPrecisionForLargeLogits) {
  EMBER_REQUIRE_CUDA();
  Tensor rows = log_softmax(tensor({1e8, 1e8}).to(gpu()), 0).cpu();
  EXPECT_NEAR(values(rows)[0], -0.6931472, 1e-6);
  Tensor cols = log_softmax(tensor({1e8, 1e8}).view({2, 1}).to(gpu()), 0).cpu();
  EXPECT_NEAR(values(cols)[1], -0.6931472, 1e-6);
  Tensor d = log_softmax(tensor({1e17, 1e17, 1e17}).to(kFloat64).to(gpu()), 0).cpu();
  EXPECT_NEAR(values(d)[2], -1.0986122887, 1e-9);
}

TEST(CudaTorchParity, PoolingOutputSizeFloors) {
  EMBER_REQUIRE_CUDA();
  EXPECT_THROW(max_pool2d(tensor({1.0, 2.0}).view({1, 1, 2, 1}).to(gpu()), {2, 2}), Error);
  EXPECT_THROW(avg_pool2d(uniform({1, 1, 2, 2}).to(gpu()), {4, 4}, std::nullopt, {1, 0}), Error);
}

TEST(CudaTorchParity, AvgPoolOnIntegersRoundsTowardZero) {
  EMBER_REQUIRE_CUDA();
  Tensor x = arange(25, TensorOptions(kInt64)).view({1, 1, 5, 5}) * -7 + 11;
  for (DType dt : {kInt64, kInt32}) {
    auto f = [](const std::vector<Tensor>& in) {
      return avg_pool2d(in[0], {3, 3}, Pair{2, 1}, {1, 1}, false, false);
    };
    EXPECT_TRUE(same_on_cuda(f, {x.to(dt)}, 0)) << dt;
  }
}

TEST(CudaTorchParity, BoolArithmeticAndReductions) {
  EMBER_REQUIRE_CUDA();
  Tensor a = bools_on_gpu({true, true, false, false}), b = bools_on_gpu({true, false, true, false});
  EXPECT_EQ(values(add(a, b).cpu()), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(mul(a, b).cpu()), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(maximum(a, b).cpu()), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(minimum(a, b).cpu()), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(add(a, Scalar(true)).dtype(), kBool);
  EXPECT_TRUE(amax(b).cpu().item<bool>());
  EXPECT_FALSE(amin(b).cpu().item<bool>());
  EXPECT_NEAR(logsumexp(b.view({2, 2}), {1}).cpu()[0].item<double>(), 1.3132616, 1e-6);
  Tensor s = scatter_add(zeros({3}, TensorOptions(kBool).with_device(gpu())), 0,
                         tensor({0, 0, 2}, TensorOptions(kInt64)).to(gpu()),
                         bools_on_gpu({true, true, false}));
  EXPECT_EQ(values(s.cpu()), (std::vector<double>{1, 0, 0}));
}

TEST(CudaTorchParity, LogsumexpOfIntegersAndStdGradient) {
  EMBER_REQUIRE_CUDA();
  Tensor i = tensor({-2e9, 2e9}, TensorOptions(kInt32)).to(gpu());
  EXPECT_NEAR(logsumexp(i, {0}).cpu().item<double>(), 2e9, 1e3);
  Tensor x = tensor({1.0, 1.0, 1.0}).to(kFloat64).to(gpu()).requires_grad_();
  x.std().backward();
  EXPECT_EQ(values(x.grad().cpu()), (std::vector<double>{0, 0, 0}));
}

TEST(CudaTorchParity, CrossEntropyOnSpatialInputs) {
  EMBER_REQUIRE_CUDA();
  Tensor x = sin(arange(12, TensorOptions(kFloat64))).view({2, 3, 2});
  Tensor t = tensor({{0, 2}, {1, -100}}, TensorOptions(kInt64));
  Tensor p = softmax(uniform({2, 3, 2}, kFloat64), 1);
  Tensor w = tensor({1.0, 2.0, 3.0}).to(kFloat64);
  auto f = [](const std::vector<Tensor>& in) {
    return F::cross_entropy(in[0], in[1], in[2], -100, F::Reduction::None);
  };
  EXPECT_TRUE(same_on_cuda(f, {x, t, w}, 1e-12));
  EXPECT_TRUE(same_on_cuda(f, {x, p, w}, 1e-12));
}

}  // namespace
}  // namespace ember
