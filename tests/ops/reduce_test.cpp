#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

// Reduces v (row-major, `shape`) over `dims` with f, a plain reference.
std::vector<double> ref_reduce(const std::vector<double>& v, const Shape& shape, const Shape& dims,
                               double init, const std::function<double(double, double)>& f,
                               Shape* out_shape) {
  Shape keep = shape;
  for (int64_t d : dims) keep[static_cast<size_t>(d)] = 1;
  *out_shape = keep;
  std::vector<double> out(static_cast<size_t>(numel_of(keep)), init);
  Shape ks = contiguous_strides(keep);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t k = rem % shape[d];
      rem /= shape[d];
      if (keep[d] != 1 || shape[d] == 1) off += (keep[d] == 1 ? 0 : k) * ks[d];
    }
    out[static_cast<size_t>(off)] = f(out[static_cast<size_t>(off)], v[static_cast<size_t>(i)]);
  }
  return out;
}

struct ReduceCase {
  Shape shape;
  Shape dims;
};

const std::vector<ReduceCase> kCases = {
    {{7}, {0}},
    {{3, 4}, {0}},
    {{3, 4}, {1}},
    {{3, 4}, {0, 1}},
    {{2, 3, 4}, {1}},
    {{2, 3, 4}, {0, 2}},
    {{4, 3, 5, 6}, {0, 2, 3}},
    {{5, 1, 3}, {1}},
    {{2, 3}, {-1}},
    {{1000, 33}, {0}},
    {{33, 1000}, {1}},
};

TEST(Reduce, SumMeanMaxMinMatchReference) {
  for (const ReduceCase& c : kCases) {
    for (bool keepdim : {false, true}) {
      for (bool strided : {false, true}) {
        Tensor x = uniform(c.shape, kFloat64, -2, 2);
        if (strided) x = noncontiguous(x);
        Shape dims;
        for (int64_t d : c.dims) dims.push_back(d < 0 ? d + x.dim() : d);
        std::sort(dims.begin(), dims.end());
        Shape ks;
        auto expect = [&](const char* what, const Tensor& got, double init,
                          std::function<double(double, double)> f, double scale) {
          std::vector<double> r = ref_reduce(values(x), x.sizes(), dims, init, f, &ks);
          for (double& v : r) v *= scale;
          Tensor e = make(r, ks);
          if (!keepdim) {
            for (size_t i = dims.size(); i-- > 0;) e = e.squeeze(dims[i]);
          }
          EXPECT_TRUE(all_close(got, e, 1e-10, 1e-10))
              << what << " " << c.shape << " dims " << c.dims << " keepdim " << keepdim
              << " strided " << strided;
        };
        int64_t n = 1;
        for (int64_t d : dims) n *= x.size(d);
        expect(
            "sum", x.sum(c.dims, keepdim), 0, [](double a, double b) { return a + b; }, 1);
        expect(
            "mean", x.mean(c.dims, keepdim), 0, [](double a, double b) { return a + b; }, 1.0 / n);
        expect(
            "amax", x.amax(c.dims, keepdim), -INFINITY,
            [](double a, double b) { return std::max(a, b); }, 1);
        expect(
            "amin", x.amin(c.dims, keepdim), INFINITY,
            [](double a, double b) { return std::min(a, b); }, 1);
      }
    }
  }
}

TEST(Reduce, FloatSumOfManyElementsIsAccurate) {
  Tensor x = full({16 * 1024 * 1024}, 0.1f, kFloat32);
  EXPECT_NEAR(x.sum().item<double>(), 0.1f * 16 * 1024 * 1024, 1.0);
  Tensor y = uniform({5000001}, kFloat32);
  double ref = 0;
  for (double v : values(y)) ref += v;
  EXPECT_NEAR(y.sum().item<double>(), ref, 1e-3 * std::sqrt(5000001.0));
}

TEST(Reduce, IntegerSumsPromoteToInt64) {
  EXPECT_EQ(ones({3}, kInt32).sum().dtype(), kInt64);
  EXPECT_EQ(ones({3}, kBool).sum().item<int64_t>(), 3);
  EXPECT_EQ(ones({3}, kUInt8).mul(200).sum().item<int64_t>(), 600);
  EXPECT_EQ(ones({2}, kFloat16).sum().dtype(), kFloat16);
  EXPECT_EQ(tensor({1.0, 2.0}).sum({0}, false, kFloat64).dtype(), kFloat64);
}

TEST(Reduce, MaxMinWithIndicesAndArgs) {
  Tensor x = tensor({{1.0, 5.0, 5.0}, {-2.0, -1.0, -3.0}});
  auto [v, i] = x.max(1);
  EXPECT_EQ(values(v), (std::vector<double>{5, -1}));
  EXPECT_EQ(values(i), (std::vector<double>{1, 1}));  // first of the ties
  auto [vmin, imin] = x.min(0, /*keepdim=*/true);
  EXPECT_EQ(vmin.sizes(), (Shape{1, 3}));
  EXPECT_EQ(values(imin), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(x.argmax().item<int64_t>(), 1);
  EXPECT_EQ(x.argmin().item<int64_t>(), 5);
  EXPECT_EQ(values(x.argmax(0)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(x.argmax(1, true).sizes(), (Shape{2, 1}));
  Tensor nan = tensor({1.0, NAN, 3.0});
  EXPECT_TRUE(std::isnan(nan.max().item<double>()));
  EXPECT_EQ(nan.argmax().item<int64_t>(), 1);
  EXPECT_THROW_WITH(zeros({0}).max(), "to have non-zero size");
  EXPECT_THROW_WITH(zeros({2, 0}).argmax(1), "non-zero size");
}

TEST(Reduce, ASingleDimNeedsNoBraces) {
  // x.sum(0) reads as in PyTorch and means the same as x.sum({0}).
  Tensor x = tensor({{1.0, 2.0, 4.0}, {3.0, 3.0, 3.0}});
  EXPECT_EQ(values(x.sum(0)), values(x.sum({0})));
  EXPECT_TRUE(all_close(x.mean(1), tensor({7.0 / 3, 3.0})));
  EXPECT_EQ(values(x.amax(-1)), (std::vector<double>{4, 3}));
  EXPECT_TRUE(all_close(x.var(0, /*unbiased=*/false), tensor({1.0, 0.25, 0.25})));
  EXPECT_EQ(x.sum(1, /*keepdim=*/true).sizes(), (Shape{2, 1}));
  EXPECT_THROW_WITH(x.sum(2), "dimension out of range");
}

TEST(Reduce, VarStdProdAllAny) {
  Tensor x = tensor({{1.0, 2.0, 4.0}, {3.0, 3.0, 3.0}});
  EXPECT_NEAR(x.var().item<double>(), 1.0666666666666667, 1e-6);
  EXPECT_TRUE(all_close(x.var({1}), tensor({7.0 / 3, 0.0})));
  EXPECT_TRUE(all_close(x.var({1}, /*unbiased=*/false), tensor({14.0 / 9, 0.0})));
  EXPECT_TRUE(all_close(x.std({0}), tensor({std::sqrt(2.0), std::sqrt(0.5), std::sqrt(0.5)})));
  EXPECT_EQ(x.prod().item<double>(), 216);
  EXPECT_EQ(values(x.prod(1)), (std::vector<double>{8, 27}));
  EXPECT_TRUE(tensor({true, true}).all().item<bool>());
  EXPECT_FALSE(tensor({0, 1}).all().item<bool>());
  EXPECT_TRUE(tensor({0, 1}).any().item<bool>());
  EXPECT_FALSE(zeros({0}).any().item<bool>());
  EXPECT_TRUE(zeros({0}).all().item<bool>());
  EXPECT_EQ(zeros({0}).sum().item<double>(), 0);
  EXPECT_TRUE(std::isnan(zeros({0}).mean().item<double>()));
  EXPECT_NEAR(tensor({3.0, 4.0}).norm().item<double>(), 5.0, 1e-6);
  EXPECT_TRUE(all_close(tensor({{1.0, 2.0}}).logsumexp({1}),
                        tensor({std::log(std::exp(1.0) + std::exp(2.0))})));
  EXPECT_THROW_WITH(tensor({1, 2}).mean(), "floating point");
  EXPECT_THROW_WITH(x.sum({0, 0}), "appears multiple times");
  EXPECT_THROW_WITH(x.sum({2}), "dimension out of range");
}

TEST(Reduce, EdgeCasesAsPyTorch) {
  EXPECT_EQ(tensor({0.0, 1.0, 2.0}).norm(0).item<double>(), 2) << "the 0-norm counts non-zeros";
  EXPECT_EQ(tensor({1, 2}).to(kInt32).sum(kInt32).dtype(), kInt32);
  EXPECT_EQ(tensor({1, 2}).to(kInt32).sum().dtype(), kInt64);
  Tensor l = empty({2, 0}).logsumexp({1});
  EXPECT_EQ(l.sizes(), (Shape{2}));
  EXPECT_TRUE(std::isinf(l[0].item<double>()) && l[0].item<double>() < 0);
}

}  // namespace
}  // namespace ember
