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
  // A constant row whose sum / n rounds (0.1 * 3 / 3 != 0.1) still has std exactly 0.
  Tensor c = full({3}, 0.1, TensorOptions(kFloat64)).requires_grad_();
  Tensor s = c.std();
  EXPECT_EQ(s.item<double>(), 0.0);
  s.backward();
  EXPECT_EQ(values(c.grad()), (std::vector<double>{0, 0, 0}));
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

TEST(TorchParity, NllLossOnSpatialInputs) {
  Tensor logp = log_softmax(sin(arange(12, TensorOptions(kFloat64))).view({2, 3, 2}), 1);
  Tensor t = tensor({{0, 2}, {1, -100}}, TensorOptions(kInt64));
  Tensor w = tensor({1.0, 2.0, 3.0}).to(kFloat64);
  EXPECT_NEAR(F::nll_loss(logp, t, w).item<double>(), 1.5176111790, 1e-9);
  EXPECT_EQ(F::nll_loss(logp, t, w, -100, F::Reduction::None).sizes(), (Shape{2, 2}));
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

// Found by tests/oracle's differential test against libtorch.

TEST(TorchParity, HalfLogSoftmaxKeepsItsRow) {
  // The 16-bit row was converted into a buffer that exp() then overwrote.
  for (DType t : {kFloat16, kBFloat16}) {
    Tensor r = log_softmax(tensor({{1.0}}).to(t), 0);
    EXPECT_EQ(values(r)[0], 0.0) << t;
    Tensor x = tensor({1.0, 2.0, 3.0, 4.0}).to(t);
    EXPECT_TRUE(
        all_close(log_softmax(x, 0).to(kFloat64), log_softmax(x.to(kFloat64), 0), 1e-2, 1e-2))
        << t;
  }
}

TEST(TorchParity, AllAnyOfUInt8GiveUInt8) {
  Tensor u = tensor({0, 3}, TensorOptions(kUInt8));
  EXPECT_EQ(all(u).dtype(), kUInt8);
  EXPECT_EQ(any(u, 0).dtype(), kUInt8);
  EXPECT_EQ(any(u).item<int64_t>(), 1);
  EXPECT_EQ(all(tensor({0, 3})).dtype(), kBool);
}

TEST(TorchParity, SubRejectsBoolOperands) {
  EXPECT_THROW(sub(tensor({1.0}), bools({true})), Error);
  EXPECT_THROW(sub(tensor({1.0}), Scalar(true)), Error);
  EXPECT_THROW(Scalar(1) - bools({true}), Error);
  // Scalar - uint8 promotes before negating: 1.75 - 1 is 0.75, not 1.75 + 255.
  Tensor r = Scalar(1.75) - tensor({1}, TensorOptions(kUInt8));
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r)[0], 0.75);
}

TEST(TorchParity, CrossEntropyProbabilitiesRejectIgnoreIndex) {
  EXPECT_THROW(F::cross_entropy(zeros({2, 3}), softmax(uniform({2, 3}), 1), Tensor(), 1), Error);
}

TEST(TorchParity, NormChecksAndGradients) {
  EXPECT_THROW(norm(tensor({1, 2})), Error);  // integers
  EXPECT_EQ(norm(zeros({3, 0}), INFINITY).item<float>(), 0.0F);
  // The gradient at a zero norm is 0 (the composed sqrt gave NaN) ...
  for (double p : {2.0, 3.0}) {
    Tensor x = zeros({3}, TensorOptions(kFloat64)).requires_grad_();
    norm(x, p).backward();
    EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 0})) << p;
  }
  // ... except that p = 2 masks before multiplying by the incoming gradient, as PyTorch 1.13.
  Tensor x = zeros({2}, TensorOptions(kFloat64)).requires_grad_();
  norm(x, 2).backward(scalar_tensor(NAN, TensorOptions(kFloat64)));
  EXPECT_TRUE(std::isnan(values(x.grad())[0]));
  Tensor y = tensor({3.0, -4.0}).to(kFloat64).requires_grad_();
  norm(y, 2).backward();
  EXPECT_TRUE(all_close(y.grad(), tensor({0.6, -0.8}, TensorOptions(kFloat64)), 1e-12, 1e-12));
}

TEST(TorchParity, MaskedFillValueMustFit) {
  EXPECT_THROW(zeros({2}, TensorOptions(kInt32)).masked_fill(bools({true, false}), 3e9), Error);
  EXPECT_THROW(zeros({2}, TensorOptions(kFloat16)).masked_fill(bools({true, false}), 1e6), Error);
  EXPECT_EQ(values(zeros({2}, TensorOptions(kUInt8)).masked_fill(bools({true, false}), 1.5)),
            (std::vector<double>{1, 0}));
  EXPECT_TRUE(std::isinf(values(zeros({1}).masked_fill(bools({true}), INFINITY))[0]));
}

TEST(TorchParity, ClampWithMinAboveMaxGivesMax) {
  EXPECT_EQ(values(clamp(tensor({0.0, 5.0}), Scalar(2.0), Scalar(1.0))),
            (std::vector<double>{1, 1}));
}

TEST(TorchParity, NarrowAndSqueezeDims) {
  EXPECT_EQ(zeros({1, 0}).narrow(-1, -1, 0).sizes(), (Shape{1, 0}));
  EXPECT_EQ(zeros({3}).narrow(0, 3, 0).sizes(), (Shape{0}));
  EXPECT_THROW(scalar_tensor(1.0).squeeze(1), Error);
  EXPECT_EQ(scalar_tensor(1.0).squeeze(-1).dim(), 0);
}

TEST(TorchParity, HalfVarianceAccumulatesInFloat) {
  Tensor x = tensor({-8192.0, 0.0, 8192.0}).to(kFloat16);
  EXPECT_NEAR(values(x.std())[0], 8192.0, 8.0);  // the variance itself overflows float16
  EXPECT_TRUE(std::isinf(values(x.var())[0]));
}

TEST(TorchParity, FloatStdAccumulatesWider) {
  // Differential seed 47: the squared deviations overflow float32 long before the root does.
  Tensor x = tensor({-1e30, 0.0}).requires_grad_();  // float32
  Tensor s = x.std({}, false);
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_NEAR(values(s)[0] / 5e29, 1.0, 1e-6);
  s.backward();
  std::vector<double> g = values(x.grad());  // (x - mean) / (n std) = -0.5, 0.5
  EXPECT_NEAR(g[0], -0.5, 1e-6);
  EXPECT_NEAR(g[1], 0.5, 1e-6);
  EXPECT_TRUE(std::isinf(values(x.detach().var())[0]));  // as torch: 2.5e59 is no float32
}

TEST(TorchParity, MaxMinGradientWithNanGoesToBoth) {
  Tensor a = tensor({NAN, 1.0, 2.0}).to(kFloat64).requires_grad_();
  Tensor b = tensor({1.0, 1.0, 3.0}).to(kFloat64).requires_grad_();
  maximum(a, b).sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{1, 0.5, 0}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 0.5, 1}));
}

TEST(TorchParity, ReluPassesTheGradientOfNan) {
  Tensor x = tensor({NAN, -1.0, 0.0, 2.0}).to(kFloat64).requires_grad_();
  relu(x).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 0, 0, 1}));
}

TEST(TorchParity, VarGradientSkipsTheMeanTerm) {
  // With an infinite element the mean's term is inf - inf; PyTorch's formula has none.
  Tensor x = tensor({1.0, 2.0, INFINITY}).to(kFloat64).requires_grad_();
  x.var().backward();
  std::vector<double> g = values(x.grad());
  EXPECT_TRUE(std::isinf(g[0]) && g[0] < 0) << g[0];
  Tensor y = tensor({1.0, 2.0, 4.0}).to(kFloat64).requires_grad_();
  y.var().backward();
  EXPECT_TRUE(all_close(y.grad(), tensor({-4.0 / 3, -1.0 / 3, 5.0 / 3}, TensorOptions(kFloat64)),
                        1e-12, 1e-12));
}

TEST(TorchParity, IntegerMatmulWrapsLikeTorch) {
  Tensor a = tensor({{2000000000, 2000000000}}, TensorOptions(kInt32));
  Tensor b = tensor({{2}, {1}}, TensorOptions(kInt32));
  // 6e9 wraps modulo 2^32 to 1705032704, as int32 arithmetic does (float64 saturated it).
  EXPECT_EQ(matmul(a, b).item<int64_t>(), 1705032704);
  EXPECT_EQ(matmul(a.to(kInt64), b.to(kInt64)).item<int64_t>(), 6000000000);
  EXPECT_EQ(addmm(tensor({1}, TensorOptions(kInt64)), zeros({1, 0}, TensorOptions(kInt64)),
                  zeros({0, 1}, TensorOptions(kInt64)))
                .item<int64_t>(),
            1);
}

TEST(TorchParity, BoolArgmaxAndMatmul) {
  EXPECT_EQ(argmax(bools({false, true, true})).item<int64_t>(), 1);
  EXPECT_EQ(argmin(bools({true, false, false}), 0).item<int64_t>(), 1);
  EXPECT_THROW(matmul(bools({true}).view({1, 1}), bools({true}).view({1, 1})), Error);
  EXPECT_FALSE(mm(zeros({2, 0}, TensorOptions(kBool)), zeros({0, 2}, TensorOptions(kBool)))
                   .any()
                   .item<bool>());
}

TEST(TorchParity, LinearBiasMustExpandToTheOutput) {
  EXPECT_THROW(linear(zeros({3, 2, 1}), zeros({1, 1}), zeros({0})), Error);
}

TEST(TorchParity, PowScalarRules) {
  EXPECT_THROW(pow(tensor({2}), Scalar(-1)), Error);  // integers to negative integer powers
  EXPECT_EQ(values(pow(tensor({4}), Scalar(-1.0)))[0], 0.25);
  EXPECT_TRUE(std::isnan(values(pow(tensor({-INFINITY}), Scalar(0.5)))[0]));  // sqrt, as torch
  EXPECT_TRUE(std::isnan(values(pow(tensor({-INFINITY}), Scalar(-0.5)))[0]));
  EXPECT_TRUE(std::isinf(values(pow(tensor({-INFINITY}).to(kFloat16), Scalar(0.5)))[0]));
}

TEST(TorchParity, BoolAddWithFalseAlpha) {
  EXPECT_EQ(values(add(bools({false, true}), bools({true, true}), Scalar(false))),
            (std::vector<double>{0, 1}));
}

TEST(TorchParity, NllLossIgnoresRowsWithInfiniteLogProbabilities) {
  Tensor logp = tensor({{-INFINITY, 0.0}, {0.0, -1.0}}).to(kFloat64);
  Tensor t = tensor({0, 1}, TensorOptions(kInt64));
  Tensor r = F::nll_loss(logp, t, Tensor(), /*ignore_index=*/0, F::Reduction::None);
  EXPECT_EQ(values(r), (std::vector<double>{0, 1}));
  Tensor ce = F::cross_entropy(tensor({{-INFINITY, 0.0}, {0.0, -1.0}}).to(kFloat64), t, Tensor(), 0,
                               F::Reduction::Sum, 0.3);
  EXPECT_TRUE(std::isfinite(ce.item<double>()));
}

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

// Found by the differential test's sequence-op families (seeds 1-8, tests/oracle).
TEST(TorchParity, FillValuesMustFitTheDtype) {
  // A float into an integer dtype must lie within its range; an int may wrap into uint8 from
  // below (as torch.full((2,), -2, dtype=torch.uint8) gives 254), not beyond it.
  EXPECT_THROW(zeros({2}, kInt32).fill_(1e10), Error);
  EXPECT_THROW(zeros({2}, kFloat16).fill_(1e10), Error);
  EXPECT_THROW(zeros({2}, kUInt8).fill_(-1.0), Error);
  EXPECT_THROW(zeros({2}, kInt64).fill_(std::nan("")), Error);
  EXPECT_THROW(full({2}, 300, kUInt8), Error);
  EXPECT_EQ(values(full({2}, -2, kUInt8)), (std::vector<double>{254, 254}));
  EXPECT_EQ(values(zeros({1}, kFloat16).fill_(-INFINITY)), (std::vector<double>{-INFINITY}));
  EXPECT_EQ(values(zeros({1}, kInt32).fill_(1.7)), (std::vector<double>{1}));
  EXPECT_EQ(values(zeros({1}, kBool).fill_(2)), (std::vector<double>{1}));
  // F.pad's value is a float: -2 does not fit uint8 there.
  EXPECT_THROW(pad(ones({2}, kUInt8), {1, 1}, "constant", -2), Error);
}

TEST(TorchParity, LayerNormOfNoSamplesHasZeroParameterGradients) {
  Tensor x = zeros({0, 3}).requires_grad_();
  Tensor w = ones({3}).requires_grad_(), b = zeros({3}).requires_grad_();
  F::layer_norm(x, {3}, w, b).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{0, 0, 0}));
}

TEST(TorchParity, BaddbmmWithBetaZeroIgnoresTheInput) {
  Tensor input = full({1, 2, 2}, std::nan(""));
  Tensor y = baddbmm(input, ones({1, 2, 3}), ones({1, 3, 2}), /*beta=*/0, /*alpha=*/2);
  EXPECT_EQ(values(y), (std::vector<double>{6, 6, 6, 6}));
}

TEST(TorchParity, TopkOfA0DimTensorWithKZeroRaises) {
  EXPECT_THROW(topk(full({}, 2.0), 0), Error);
  EXPECT_EQ(values(std::get<0>(topk(full({}, 2.0), 1))), (std::vector<double>{2}));
}

}  // namespace
}  // namespace ember
