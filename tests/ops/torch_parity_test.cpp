// PyTorch 1.13's answers where ember once differed (the reproductions of issue 13), and the bool
// and integer dtypes PyTorch computes with. Expected values were printed by torch 1.13.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ember/nn/functional.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
namespace F = ember::nn::functional;

Tensor bools(std::initializer_list<bool> v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(kBool));
  std::copy(v.begin(), v.end(), static_cast<bool*>(t.data_ptr()));
  return t;
}

TEST(TorchParity, PoolingOutputSizeFloorsANegativeSpan) {
  Tensor x = tensor({1.0, 2.0}).view({1, 1, 2, 1});
  EXPECT_THROW(max_pool2d(x, {2, 2}), Error);
  Tensor y = tensor({1.0, 2.0, 3.0, 4.0}).view({1, 1, 2, 2});
  EXPECT_THROW(avg_pool2d(y, {4, 4}, std::nullopt, {1, 0}), Error);
  // ceil_mode keeps its own rule: a 2x2 window with stride 2 over 3 rows gives 2 rows.
  Tensor z = uniform({1, 1, 3, 3});
  EXPECT_EQ(max_pool2d(z, {2, 2}, std::nullopt, {0, 0}, {1, 1}, /*ceil_mode=*/true).sizes(),
            (Shape{1, 1, 2, 2}));
}

TEST(TorchParity, LogsumexpOfIntegersRunsInFloat) {
  Tensor u = tensor({0, 1}, TensorOptions(kUInt8));
  Tensor r = logsumexp(u, {0});
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_NEAR(r.item<double>(), 1.3132616, 1e-6);
  Tensor i = tensor({-2e9, 2e9}, TensorOptions(kInt32));
  EXPECT_NEAR(logsumexp(i, {0}).item<double>(), 2e9, 1e3);
  EXPECT_NEAR(logsumexp(bools({true, false}), {0}).item<double>(), 1.3132616, 1e-6);
}

TEST(TorchParity, BoolScalarStaysBool) {
  Tensor r = add(bools({true, false}), Scalar(true));
  EXPECT_EQ(r.dtype(), kBool);
  EXPECT_EQ(values(r), (std::vector<double>{1, 1}));
  EXPECT_EQ(add(bools({true, false}), Scalar(true), Scalar(2)).dtype(), kBool);
}

TEST(TorchParity, AlphaMustFitTheResultKind) {
  Tensor a = tensor({1}, TensorOptions(kInt32)), b = tensor({2}, TensorOptions(kInt32));
  EXPECT_THROW(add(a, b, Scalar(2.5)), Error);
  EXPECT_THROW(add(a, Scalar(2), Scalar(2.5)), Error);
  EXPECT_THROW(sub(a, b, Scalar(2.5)), Error);
  EXPECT_THROW(add(tensor({1.0}), tensor({2.0}), Scalar(true)), Error);
  EXPECT_EQ(values(add(a, b, Scalar(3))), (std::vector<double>{7}));
  EXPECT_EQ(values(add(a, Scalar(2.5))), (std::vector<double>{3.5}));  // the scalar promotes
  EXPECT_EQ(values(add(tensor({1.0}), tensor({2.0}), Scalar(2.5))), (std::vector<double>{6}));
  Tensor c = a.clone();
  EXPECT_THROW(c.add_(b, Scalar(1.5)), Error);
}

TEST(TorchParity, StdGradientIsZeroWhereStdIsZero) {
  Tensor x = tensor({1.0, 1.0, 1.0}).to(kFloat64).requires_grad_();
  x.std().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 0}));
  // Elsewhere the gradient is (x - mean) / ((n - 1) std).
  Tensor y = tensor({1.0, 2.0, 3.0}).to(kFloat64).requires_grad_();
  y.std().backward();
  EXPECT_TRUE(all_close(y.grad(), tensor({-0.5, 0.0, 0.5}).to(kFloat64), 1e-12, 1e-12));
}

TEST(TorchParity, LogSoftmaxKeepsPrecisionForLargeLogits) {
  Tensor r = log_softmax(tensor({1e8, 1e8}), 0);
  EXPECT_NEAR(values(r)[0], -0.6931472, 1e-6);
  Tensor d = log_softmax(tensor({1e17, 1e17, 1e17}).to(kFloat64), 0);
  EXPECT_NEAR(values(d)[2], -1.0986122887, 1e-9);
  // The strided (column) path too.
  Tensor c = log_softmax(tensor({1e8, 1e8}).view({2, 1}), 0);
  EXPECT_NEAR(values(c)[1], -0.6931472, 1e-6);
}

TEST(TorchParity, CrossEntropyProbabilitiesWeightTheClassDim) {
  Tensor x = tensor({0.0, 1.0, 2.0, 3.0}).to(kFloat64).view({1, 2, 2});
  Tensor t = tensor({0.5, 0.25, 0.5, 0.75}).to(kFloat64).view({1, 2, 2});
  Tensor w = tensor({1.0, 3.0}).to(kFloat64);
  Tensor r = F::cross_entropy(x, t, w, -100, F::Reduction::None);
  EXPECT_EQ(r.sizes(), (Shape{1, 2}));
  EXPECT_TRUE(
      all_close(r, tensor({{1.2538560221, 0.8173200276}}, TensorOptions(kFloat64)), 1e-9, 1e-9));
  Tensor r3 = F::cross_entropy(zeros({1, 3, 1}), zeros({1, 3, 1}), tensor({1.0, 2.0, 3.0}), -100,
                               F::Reduction::None);
  EXPECT_EQ(r3.sizes(), (Shape{1, 1}));
}

TEST(TorchParity, CrossEntropyClassIndicesOnSpatialInputs) {
  Tensor x = sin(arange(12, TensorOptions(kFloat64))).view({2, 3, 2});
  Tensor t = tensor({{0, 2}, {1, -100}}, TensorOptions(kInt64));
  Tensor w = tensor({1.0, 2.0, 3.0}).to(kFloat64);
  Tensor none = F::cross_entropy(x, t, w, -100, F::Reduction::None);
  EXPECT_TRUE(all_close(
      none, tensor({{1.3741564726, 6.9246093003}, {0.8069013011, 0.0}}, TensorOptions(kFloat64)),
      1e-9, 1e-9));
  EXPECT_NEAR(F::cross_entropy(x, t, w).item<double>(), 1.5176111790, 1e-9);
  EXPECT_NEAR(F::cross_entropy(x, t, w, -100, F::Reduction::Sum).item<double>(), 9.1056670740,
              1e-9);
  EXPECT_NEAR(F::cross_entropy(x, t, w, -100, F::Reduction::Mean, 0.2).item<double>(), 1.5122567428,
              1e-9);
  EXPECT_THROW(F::cross_entropy(x, tensor({0, 1}, TensorOptions(kInt64))), Error);
}

TEST(TorchParity, CatPromotesOverSkippedEmpties) {
  Tensor r = cat({empty({0}, TensorOptions(kFloat32)), tensor({1, 2}, TensorOptions(kInt64))}, 0);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 2}));
  Tensor e = cat({empty({0}, TensorOptions(kInt64)), empty({0}, TensorOptions(kFloat64))}, 0);
  EXPECT_EQ(e.dtype(), kFloat64);
}

TEST(TorchParity, DimOutOfRangeOnZeroDim) {
  Tensor s = scalar_tensor(1.0, TensorOptions(kFloat32));
  EXPECT_THROW(log_softmax(s, 1), Error);
  EXPECT_THROW(s.flatten(0, 2), Error);
  EXPECT_EQ(s.flatten(0, -1).sizes(), (Shape{1}));
  EXPECT_NEAR(log_softmax(s, -1).item<double>(), 0.0, 0.0);
}

TEST(TorchParity, IndexSelectChecksRangeOnEmptyResults) {
  EXPECT_THROW(index_select(zeros({2, 0}), 0, tensor({5}, TensorOptions(kInt64))), Error);
  EXPECT_EQ(index_select(zeros({2, 0}), 0, tensor({1}, TensorOptions(kInt64))).sizes(),
            (Shape{1, 0}));
  Tensor s = scalar_tensor(5.0, TensorOptions(kFloat32));
  EXPECT_EQ(index_select(s, 0, tensor({0}, TensorOptions(kInt64))).item<float>(), 5.0F);
  try {
    index_select(s, 0, tensor({0, 0}, TensorOptions(kInt64)));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[index_select]"), std::string::npos) << e.what();
  }
}

TEST(TorchParity, BoolArithmeticIsLogic) {
  Tensor a = bools({true, true, false, false}), b = bools({true, false, true, false});
  auto check = [](const Tensor& r, std::vector<double> want) {
    EXPECT_EQ(r.dtype(), kBool);
    EXPECT_EQ(values(r), want);
  };
  check(add(a, b), {1, 1, 1, 0});
  check(mul(a, b), {1, 0, 0, 0});
  check(maximum(a, b), {1, 1, 1, 0});
  check(minimum(a, b), {1, 0, 0, 0});
  check(mul(a, Scalar(true)), {1, 1, 0, 0});
  EXPECT_THROW(sub(a, b), Error);
  EXPECT_THROW(sub(a, Scalar(true)), Error);
  Tensor c = a.clone();
  c.add_(b);
  check(c, {1, 1, 1, 0});
  // Mixed with numbers, bool promotes.
  EXPECT_EQ(add(a, Scalar(2)).dtype(), kInt64);
  EXPECT_EQ(values(mul(a, Scalar(3))), (std::vector<double>{3, 3, 0, 0}));
}

TEST(TorchParity, BoolUnaryAndReductions) {
  Tensor a = bools({false, true, true});
  Tensor s = sign(a);
  EXPECT_EQ(s.dtype(), kBool);
  EXPECT_EQ(values(s), (std::vector<double>{0, 1, 1}));
  Tensor q = square(a);
  EXPECT_EQ(q.dtype(), kInt64);
  EXPECT_EQ(values(q), (std::vector<double>{0, 1, 1}));
  EXPECT_TRUE(max(a).item<bool>());
  EXPECT_FALSE(min(a).item<bool>());
  EXPECT_EQ(amax(a, {0}).dtype(), kBool);
  EXPECT_FALSE(amin(a.view({1, 3}), {1}).item<bool>());
  auto [v, i] = max(a.view({1, 3}), 1);
  EXPECT_EQ(v.dtype(), kBool);
  EXPECT_TRUE(v.item<bool>());
  EXPECT_EQ(i.item<int64_t>(), 1);  // the first maximum
  auto [mv, mi] = min(a.view({1, 3}), 1);
  EXPECT_FALSE(mv.item<bool>());
  EXPECT_EQ(mi.item<int64_t>(), 0);
}

TEST(TorchParity, BoolScatterAddIsOr) {
  Tensor out = scatter_add(zeros({3}, TensorOptions(kBool)), 0,
                           tensor({0, 0, 2}, TensorOptions(kInt64)), bools({true, true, false}));
  EXPECT_EQ(out.dtype(), kBool);
  EXPECT_EQ(values(out), (std::vector<double>{1, 0, 0}));
  Tensor in = bools({false, true, false});
  in.scatter_add_(0, tensor({2}, TensorOptions(kInt64)), bools({true}));
  EXPECT_EQ(values(in), (std::vector<double>{0, 1, 1}));
}

TEST(TorchParity, AvgPoolOnIntegersRoundsTowardZero) {
  Tensor x = arange(16, TensorOptions(kInt64)).view({1, 1, 4, 4}) - 3;
  Tensor r = avg_pool2d(x, {3, 3}, Pair{1, 1}, {1, 1}, false, /*count_include_pad=*/false);
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 1, 1, 1, 2, 3, 3, 5, 6, 7, 7, 7, 8, 9, 9}));
  Tensor neg = arange(16, TensorOptions(kInt32)).view({1, 1, 4, 4}) * -1;
  Tensor n = avg_pool2d(neg, {3, 3}, Pair{1, 1}, {1, 1});
  EXPECT_EQ(values(n)[0], -1);  // -10 / 9 truncates to -1
  EXPECT_EQ(values(n)[5], -5);
  EXPECT_THROW(avg_pool2d(zeros({1, 1, 2, 2}, TensorOptions(kBool)), {2, 2}), Error);
}

}  // namespace
}  // namespace ember

namespace ember {
namespace {
using namespace ember::testing;

TEST(TorchParity, StdOfOneElementHasNanGradient) {
  // The std of one element (unbiased) is NaN, and so is its gradient, as in PyTorch.
  Tensor x = tensor({1.0, 2.0}).to(kFloat64).requires_grad_();
  Tensor n = x.norm(2);
  Tensor s = n.std({0}, true, true);
  EXPECT_TRUE(std::isnan(s.item<double>()));
  s.backward();
  std::vector<double> g = values(x.grad());
  EXPECT_TRUE(std::isnan(g[0])) << g[0];
}

}  // namespace
}  // namespace ember
