// batch_norm (fused forward and backward kernels) against the textbook formula composed of ops,
// and its building blocks (batch_norm_stats, _elemt, _gather_stats_with_counts, _backward_*)
// against batch_norm itself.
#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

Shape reduced_dims(const Tensor& x) {
  Shape dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}
Shape channel_view(const Tensor& x) {
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

// (x - mean) / sqrt(var + eps) * w + b from mean/var ops (differentiable through them). pow, not
// rsqrt: rsqrt's backward uses its saved output, which has no graph of its own, so a second
// derivative through it would miss a term.
Tensor reference(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& w,
                 const Tensor& b, double eps = 1e-5) {
  Shape v = channel_view(x);
  return (x - mean.view(v)) * pow(var.view(v) + eps, -0.5) * w.view(v) + b.view(v);
}
Tensor reference_train(const Tensor& x, const Tensor& w, const Tensor& b) {
  Shape dims = reduced_dims(x);
  return reference(x, x.mean(dims), x.var(dims, /*unbiased=*/false), w, b);
}

TEST(BatchNorm, TrainingMatchesTheFormulaAndUpdatesRunningStatistics) {
  manual_seed(0);
  for (Shape s : {Shape{6, 3}, Shape{2, 3, 5}, Shape{3, 4, 5, 6}, Shape{2, 5, 33, 17}}) {
    for (DType dt : {kFloat32, kFloat64}) {
      Tensor x = uniform(s, dt, -2, 5);  // a mean far from 0
      int64_t C = s[1];
      Tensor w = uniform({C}, dt), b = uniform({C}, dt);
      Tensor rm = zeros({C}, dt), rv = ones({C}, dt);
      Tensor y = batch_norm(x, rm, rv, w, b, /*training=*/true, 0.1, 1e-5);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_TRUE(all_close(y, reference_train(x, w, b), tolerance(dt), tolerance(dt)))
          << s << " " << dt;
      Shape dims = reduced_dims(x);
      EXPECT_TRUE(all_close(rm, x.mean(dims) * 0.1, tolerance(dt), tolerance(dt)));
      EXPECT_TRUE(
          all_close(rv, x.var(dims, /*unbiased=*/true) * 0.1 + 0.9, tolerance(dt), tolerance(dt)));
    }
  }
}

TEST(BatchNorm, EvaluationUsesRunningStatistics) {
  Tensor x = uniform({4, 3, 2, 2}, kFloat64);
  Tensor rm = tensor({0.5, -1.0, 2.0}, kFloat64), rv = tensor({1.0, 0.25, 4.0}, kFloat64);
  Tensor w = tensor({1.0, 2.0, -1.0}, kFloat64), b = tensor({0.0, 0.5, 1.0}, kFloat64);
  Tensor y = batch_norm(x, rm, rv, w, b, /*training=*/false, 0.1, 1e-3);
  EXPECT_TRUE(all_close(y, reference(x, rm, rv, w, b, 1e-3), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(rm, tensor({0.5, -1.0, 2.0}, kFloat64))) << "left alone";
  // No weight or bias: 1 and 0.
  EXPECT_TRUE(all_close(batch_norm(x, rm, rv, Tensor(), Tensor(), false, 0.1, 1e-3),
                        reference(x, rm, rv, ones({3}, kFloat64), zeros({3}, kFloat64), 1e-3),
                        1e-12, 1e-12));
}

TEST(BatchNorm, SixteenBitInputsComputeInFloat32) {
  Tensor x = uniform({4, 3, 5, 5}, kFloat32, -3, 3);
  Tensor w = uniform({3}), b = uniform({3});
  Tensor expected = reference_train(x, w, b);
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor rm = zeros({3}), rv = ones({3});
    Tensor y = batch_norm(x.to(dt), rm, rv, w, b, true);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(all_close(y.to(kFloat32), expected, 0, dt == kFloat16 ? 1e-2 : 5e-2)) << dt;
    auto [mean, invstd] = batch_norm_stats(x.to(dt), 1e-5);
    EXPECT_EQ(mean.dtype(), kFloat32);
  }
}

TEST(BatchNorm, GradientsMatchTheFormula) {
  manual_seed(1);
  for (bool training : {true, false}) {
    for (Shape s : {Shape{8, 3}, Shape{4, 16, 9, 9}}) {
      int64_t C = s[1];
      Tensor x = uniform(s, kFloat32, -1, 3).requires_grad_();
      Tensor w = uniform({C}).requires_grad_(), b = uniform({C}).requires_grad_();
      Tensor rm = uniform({C}), rv = uniform({C}, kFloat32, 0.5, 2);
      Tensor g = uniform(s);
      auto grads = [&](const Tensor& y) { return autograd::grad({(y * g).sum()}, {x, w, b}); };
      Shape dims = reduced_dims(x);
      Tensor ref = training ? reference_train(x, w, b) : reference(x, rm, rv, w, b);
      auto expected = grads(ref);
      auto actual = grads(batch_norm(x, rm.clone(), rv.clone(), w, b, training));
      for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(all_close(actual[i], expected[i], 1e-4, 1e-4))
            << s << (training ? " training" : " eval") << ": gradient " << i;
    }
  }
}

TEST(BatchNorm, NonContiguousInputAndNoAffine) {
  Tensor x = noncontiguous(uniform({3, 4, 5}, kFloat64)).requires_grad_();
  Tensor y = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_TRUE(
      all_close(y, reference_train(x, ones({4}, kFloat64), zeros({4}, kFloat64)), 1e-12, 1e-12));
  y.sum().backward();  // the sum of a normalised channel does not depend on the input
  EXPECT_TRUE(all_close(x.grad(), zeros({3, 4, 5}, kFloat64), 0, 1e-12));
}

TEST(BatchNorm, DoubleBackwardGoesThroughTheFormula) {
  for (bool training : {true, false}) {
    Tensor x = uniform({3, 2, 4}, kFloat64).requires_grad_();
    Tensor w = uniform({2}, kFloat64).requires_grad_(), b = uniform({2}, kFloat64);
    Tensor rm = tensor({0.1, 0.2}, kFloat64), rv = tensor({0.5, 1.5}, kFloat64);
    Tensor c = uniform({3, 2, 4}, kFloat64);
    auto second = [&](const Tensor& y) {
      Tensor gx = autograd::grad({(y * y * c).sum()}, {x}, {}, /*retain_graph=*/true,
                                 /*create_graph=*/true)[0];
      return autograd::grad({(gx * gx).sum()}, {x, w});
    };
    auto expected = second(training ? reference_train(x, w, b) : reference(x, rm, rv, w, b));
    auto actual = second(batch_norm(x, rm, rv, w, b, training));
    EXPECT_TRUE(all_close(actual[0], expected[0], 1e-9, 1e-9)) << training;
    EXPECT_TRUE(all_close(actual[1], expected[1], 1e-9, 1e-9)) << training;
  }
}

// The building blocks SyncBatchNorm composes give batch_norm's forward and gradients.
TEST(BatchNorm, BuildingBlocksComposeToBatchNorm) {
  manual_seed(2);
  Tensor x = uniform({6, 3, 4, 4}, kFloat64, -1, 4).requires_grad_();
  Tensor w = uniform({3}, kFloat64).requires_grad_(), b = uniform({3}, kFloat64).requires_grad_();
  Tensor g = uniform({6, 3, 4, 4}, kFloat64);
  Tensor y = batch_norm(x, Tensor(), Tensor(), w, b, true, 0.1, 1e-5);
  auto expected = autograd::grad({(y * g).sum()}, {x, w, b});

  Tensor xd = x.detach();
  auto [mean, invstd] = batch_norm_stats(xd, 1e-5);
  EXPECT_TRUE(all_close(batch_norm_elemt(xd, w.detach(), b.detach(), mean, invstd, 1e-5),
                        y.detach(), 1e-12, 1e-12));
  auto [sum_dy, sum_dy_xmu, gw, gb] =
      batch_norm_backward_reduce(g, xd, mean, invstd, w.detach(), true, true, true);
  Tensor gx = batch_norm_backward_elemt(g, xd, mean, invstd, w.detach(), sum_dy, sum_dy_xmu,
                                        static_cast<double>(6 * 16));
  EXPECT_TRUE(all_close(gx, expected[0], 1e-10, 1e-10));
  EXPECT_TRUE(all_close(gw, expected[1], 1e-10, 1e-10));
  EXPECT_TRUE(all_close(gb, expected[2], 1e-10, 1e-10));

  // Statistics of two unequal parts, gathered, are those of the whole; running ones follow.
  Tensor a = xd.narrow(0, 0, 2), c = xd.narrow(0, 2, 4);
  auto [ma, ia] = batch_norm_stats(a, 1e-5);
  auto [mc, ic] = batch_norm_stats(c, 1e-5);
  Tensor rm = zeros({3}, kFloat64), rv = ones({3}, kFloat64);
  auto [m, is] = batch_norm_gather_stats_with_counts(xd, stack({ma, mc}), stack({ia, ic}), rm, rv,
                                                     0.1, 1e-5, tensor({32.0, 64.0}, kFloat64));
  EXPECT_TRUE(all_close(m, mean, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(is, invstd, 1e-9, 1e-12));
  Tensor rm2 = zeros({3}, kFloat64), rv2 = ones({3}, kFloat64);
  batch_norm(xd, rm2, rv2, Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_TRUE(all_close(rm, rm2, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(rv, rv2, 1e-9, 1e-12));
}

TEST(BatchNorm, ErrorsSayWhatWasExpected) {
  EXPECT_THROW_WITH(batch_norm(ones({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true),
                    "expected more than 1 value per channel when training, got input size [1, 3]");
  EXPECT_THROW_WITH(batch_norm(ones({4, 3}), ones({2}), ones({2}), Tensor(), Tensor(), true),
                    "expected per-channel tensors of 3 elements, got [2]");
  EXPECT_THROW_WITH(batch_norm(ones({4}), Tensor(), Tensor(), Tensor(), Tensor(), true),
                    "expected an input with at least 2 dims");
  EXPECT_THROW_WITH(batch_norm(ones({4, 3}, kInt64), Tensor(), Tensor(), Tensor(), Tensor(), true),
                    "expected a floating point input");
  EXPECT_THROW_WITH(batch_norm(ones({4, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false),
                    "running_mean and running_var must be defined in evaluation mode");
  EXPECT_THROW_WITH(batch_norm_backward_elemt(ones({4, 3}), ones({4, 3}), zeros({3}), ones({3}),
                                              Tensor(), zeros({3}), zeros({3}), 0),
                    "expected a positive count");
}

}  // namespace
}  // namespace ember
