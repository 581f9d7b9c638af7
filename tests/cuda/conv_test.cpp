// 2-D convolutions on CUDA against the CPU, through cuDNN (its heuristics, benchmark and
// deterministic modes, TF32) and through ember's own im2col kernels: values and the gradients of
// input, weight and bias, every shape option, every floating dtype, the transposed convolution.
#include "ember/ops/conv.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

struct Case {
  Shape x, w;
  Pair stride, padding, dilation;
  int64_t groups;
};

// LeNet's two layers, ResNet's stem and a 3x3 stage, strides, dilations, groups and depthwise.
std::vector<Case> cases() {
  return {{{4, 1, 28, 28}, {6, 1, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1},
          {{4, 6, 12, 12}, {16, 6, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1},
          {{2, 3, 32, 32}, {8, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1},
          {{2, 16, 14, 14}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
          {{3, 4, 11, 9}, {6, 2, 3, 3}, {2, 1}, {1, 1}, {1, 2}, 2},
          {{2, 8, 10, 10}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 8},
          {{2, 5, 9, 13}, {7, 5, 1, 1}, {2, 3}, {0, 0}, {1, 1}, 1}};
}

void expect_convolutions_match(DType dtype, double tol) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(::testing::Message()
                 << "x " << c.x << ", w " << c.w << ", groups " << c.groups << ", " << dtype);
    std::vector<Tensor> in = {uniform(c.x).to(dtype), uniform(c.w).to(dtype),
                              uniform({c.w[0]}).to(dtype)};
    EXPECT_TRUE(same_with_gradients(
        [&](auto& v) {
          return conv2d(v[0], v[1], v[2], c.stride, c.padding, c.dilation, c.groups);
        },
        in, tol));
    // Without bias, and the transposed convolution (conv2d's gradients run forward).
    EXPECT_TRUE(same_with_gradients(
        [&](auto& v) {
          return conv2d(v[0], v[1], Tensor(), c.stride, c.padding, c.dilation, c.groups);
        },
        {in[0], in[1]}, tol));
    Tensor xt = uniform({c.x[0], c.w[0], 6, 5}).to(dtype);
    Tensor wt = uniform({c.w[0], c.w[1], c.w[2], c.w[3]}).to(dtype);
    EXPECT_TRUE(same_with_gradients(
        [&](auto& v) {
          return conv_transpose2d(v[0], v[1], v[2], c.stride, c.padding, {0, 0}, c.groups,
                                  c.dilation);
        },
        {xt, wt, uniform({c.w[1] * c.groups}).to(dtype)}, tol));
  }
}

TEST(CudaConv, CudnnMatchesTheCpu) {
  EMBER_REQUIRE_CUDA();
  if (!cudnn::built()) GTEST_SKIP() << "ember was built without cuDNN";
  CudnnSwitch on(cudnn::set_enabled, cudnn::enabled, true);
  expect_convolutions_match(kFloat32, 1e-4);
  expect_convolutions_match(kFloat64, 1e-10);
}

TEST(CudaConv, EmbersOwnKernelsMatchTheCpu) {
  EMBER_REQUIRE_CUDA();
  CudnnSwitch off(cudnn::set_enabled, cudnn::enabled, false);
  expect_convolutions_match(kFloat32, 1e-4);
}

TEST(CudaConv, HalfAndBfloat16MatchTheCpuWithinTheirPrecision) {
  EMBER_REQUIRE_CUDA();
  for (bool through_cudnn : {true, false}) {
    if (through_cudnn && !cudnn::built()) continue;
    CudnnSwitch on(cudnn::set_enabled, cudnn::enabled, through_cudnn);
    for (DType dtype : {kFloat16, kBFloat16}) {
      SCOPED_TRACE(::testing::Message() << dtype << (through_cudnn ? " cuDNN" : " ember"));
      Tensor x = uniform({4, 6, 12, 12}).to(dtype), w = uniform({16, 6, 5, 5}).to(dtype);
      // Both devices round the inputs alike; the GPU accumulates in float32, which bounds the
      // difference by the output's own rounding (bfloat16: 8 bits over sums of up to ~10).
      EXPECT_TRUE(same_on_cuda(
          [](auto& v) {
            return conv2d(v[0], v[1], Tensor(), {1, 1}, {2, 2});
          },
          {x, w}, dtype == kBFloat16 ? 8e-2 : 1e-2));
    }
  }
}

TEST(CudaConv, BenchmarkAndDeterministicModesAgree) {
  EMBER_REQUIRE_CUDA();
  if (!cudnn::built()) GTEST_SKIP() << "ember was built without cuDNN";
  Tensor x = uniform({8, 16, 20, 20}), w = uniform({32, 16, 3, 3}), g = uniform({8, 32, 20, 20});
  auto run = [&] {
    Tensor xg = x.to(gpu()).requires_grad_(), wg = w.to(gpu()).requires_grad_();
    Tensor y = conv2d(xg, wg, Tensor(), {1, 1}, {1, 1});
    (y * g.to(gpu())).sum().backward();
    return std::vector<Tensor>{y.cpu(), xg.grad().cpu(), wg.grad().cpu()};
  };
  // Algorithms sum in different orders: agreement within float32's rounding of the largest values.
  auto close = [](const Tensor& got, const Tensor& want) {
    return all_close(got, want, 1e-4, 1e-5 * abs(want).max().item<double>());
  };
  std::vector<Tensor> heuristic = run();
  {
    CudnnSwitch timed(cudnn::set_benchmark, cudnn::benchmark, true);
    std::vector<Tensor> found = run();
    for (size_t i = 0; i < found.size(); ++i) EXPECT_TRUE(close(found[i], heuristic[i])) << i;
  }
  CudnnSwitch exact(cudnn::set_deterministic, cudnn::deterministic, true);
  std::vector<Tensor> first = run(), second = run();
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(equal(first[i], second[i])) << "deterministic run differs in result " << i;
    EXPECT_TRUE(close(first[i], heuristic[i])) << i;
  }
}

// An output padding past the stride (allowed under dilation) makes the transposed convolution's
// output larger than the forward convolution would give: cuDNN cannot take that pair of shapes,
// ember's kernels run it.
TEST(CudaConv, TransposedWithOutputPaddingPastTheStride) {
  EMBER_REQUIRE_CUDA();
  EXPECT_TRUE(same_with_gradients(
      [](auto& v) {
        return conv_transpose2d(v[0], v[1], v[2], {1, 1}, {0, 0}, {1, 1}, 1, {2, 2});
      },
      {uniform({2, 4, 7, 6}), uniform({4, 3, 3, 3}), uniform({3})}, 1e-4));
}

TEST(CudaConv, Tf32StaysWithinItsPrecision) {
  EMBER_REQUIRE_CUDA();
  if (!cudnn::built()) GTEST_SKIP() << "ember was built without cuDNN";
  CudnnSwitch tf32(cudnn::set_allow_tf32, cudnn::allow_tf32, true);
  Tensor x = uniform({8, 64, 14, 14}), w = uniform({64, 64, 3, 3});
  // 576 products of 10-bit operands: errors of about 2^-11 each, well inside 2e-2 of sums of ~10.
  EXPECT_TRUE(same_on_cuda(
      [](auto& v) {
        return conv2d(v[0], v[1], Tensor(), {1, 1}, {1, 1});
      },
      {x, w}, 2e-2));
}

TEST(CudaConv, AnEmptyBatchTakesEmbersKernels) {
  EMBER_REQUIRE_CUDA();
  Tensor x = zeros({0, 3, 8, 8}).to(gpu()).requires_grad_(), w = uniform({4, 3, 3, 3}).to(gpu());
  Tensor y = conv2d(x, w);
  EXPECT_EQ(y.sizes(), (Shape{0, 4, 6, 6}));
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
  EXPECT_FALSE(cudnn::use_for_conv(x, w, y, Conv2dParams{}));
}

}  // namespace
}  // namespace ember
