#include <gtest/gtest.h>

#include <cmath>

#include "tests/util/reference.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  bool positive_b = false;  // keep b away from zero (div, pow)
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](auto& a, auto& b) { return a + b; }, [](double x, double y) { return x + y; }},
      {"add_alpha", [](auto& a, auto& b) { return add(a, b, 2.5); },
       [](double x, double y) { return x + 2.5 * y; }},
      {"sub", [](auto& a, auto& b) { return a - b; }, [](double x, double y) { return x - y; }},
      {"mul", [](auto& a, auto& b) { return a * b; }, [](double x, double y) { return x * y; }},
      {"div", [](auto& a, auto& b) { return a / b; }, [](double x, double y) { return x / y; },
       true},
      {"pow", [](auto& a, auto& b) { return pow(abs(a), b); },
       [](double x, double y) { return std::pow(std::fabs(x), y); }, true},
      {"maximum", [](auto& a, auto& b) { return maximum(a, b); },
       [](double x, double y) { return std::max(x, y); }},
      {"minimum", [](auto& a, auto& b) { return minimum(a, b); },
       [](double x, double y) { return std::min(x, y); }},
      {"lt", [](auto& a, auto& b) { return a < b; },
       [](double x, double y) { return double(x < y); }},
      {"ge", [](auto& a, auto& b) { return a >= b; },
       [](double x, double y) { return double(x >= y); }},
      {"eq", [](auto& a, auto& b) { return eq(a, a + b * 0); },
       [](double x, double) { return 1.0; }},
  };
}

const std::vector<std::pair<Shape, Shape>> kShapes = {
    {{}, {}},     {{5}, {5}},    {{2, 3}, {3}},          {{2, 1}, {1, 3}}, {{4, 1, 3}, {5, 1}},
    {{3, 4}, {}}, {{0, 3}, {3}}, {{2, 3, 4}, {2, 3, 4}},
};

TEST(Elementwise, BinaryOpsMatchReferenceWithBroadcasting) {
  for (const BinaryCase& c : binary_cases()) {
    for (auto& [sa, sb] : kShapes) {
      for (DType dt : {kFloat32, kFloat64}) {
        Tensor a = uniform(sa, dt, -2, 2);
        Tensor b = c.positive_b ? uniform(sb, dt, 0.5, 2) : uniform(sb, dt, -2, 2);
        Tensor out = c.op(a, b);
        Tensor expected = make(ref_binary(a, b, c.ref), broadcast_shapes(sa, sb, "t"));
        EXPECT_TRUE(all_close(out, expected, tolerance(dt) * 10, tolerance(dt)))
            << c.name << " " << sa << " " << sb << " " << dt;
        // Non-contiguous inputs give the same answer.
        EXPECT_TRUE(all_close(c.op(noncontiguous(a), noncontiguous(b)), out, tolerance(dt), 0))
            << c.name << " non-contiguous " << sa << " " << sb;
      }
    }
  }
}

TEST(Elementwise, SixteenBitFloatsComputeInFloat) {
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor a = uniform({1000}, dt), b = uniform({1000}, dt);
    Tensor out = a * b + a;
    EXPECT_EQ(out.dtype(), dt);
    Tensor expected = make(ref_binary(a, b, [](double x, double y) { return x * y + x; }), {1000});
    EXPECT_TRUE(all_close(out, expected, tolerance(dt) * 2, tolerance(dt))) << dt;
  }
}

struct PromotionCase {
  Tensor a, b;
  DType expected;
};

TEST(Elementwise, TypePromotionTable) {
  std::vector<PromotionCase> cases = {
      {ones({2}, kInt32), ones({2}, kInt64), kInt64},
      {ones({2}, kInt32), ones({2}, kFloat16), kFloat16},
      {ones({2}, kFloat16), ones({2}, kBFloat16), kFloat32},
      {ones({2}, kUInt8), ones({2}, kInt32), kInt32},
      {ones({2}, kBool), ones({2}, kUInt8), kUInt8},
      {ones({2}, kInt32), scalar_tensor(1, kInt64), kInt32},      // 0-dim of the same category
      {ones({2}, kInt32), scalar_tensor(1, kFloat64), kFloat64},  // 0-dim of a higher category
      {ones({2}, kFloat16), scalar_tensor(1, kFloat64), kFloat16},
      {scalar_tensor(1, kInt32), scalar_tensor(1, kInt64), kInt64},
  };
  for (auto& c : cases)
    EXPECT_EQ((c.a + c.b).dtype(), c.expected) << c.a.dtype() << " + " << c.b.dtype();
  EXPECT_EQ((ones({2}, kInt32) + 1).dtype(), kInt32);
  EXPECT_EQ((ones({2}, kInt32) * 2.5).dtype(), kFloat32);
  EXPECT_EQ((ones({2}, kFloat16) * 2.5).dtype(), kFloat16);
  EXPECT_EQ((ones({2}, kBool) + 1).dtype(), kInt64);
  EXPECT_EQ((ones({2}, kInt64) / ones({2}, kInt64)).dtype(), kFloat32);  // true division
  EXPECT_EQ((ones({2}, kInt64) < 2.5).dtype(), kBool);
  EXPECT_EQ(values(tensor({7, -7}) / 2), (std::vector<double>{3.5, -3.5}));
  EXPECT_EQ(values(ones({2}, kUInt8) * 300), (std::vector<double>{44, 44}));  // wraps like uint8
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo = -3, hi = 3;
};

TEST(Elementwise, UnaryOpsMatchReference) {
  std::vector<UnaryCase> cases = {
      {"neg", [](auto& x) { return -x; }, [](double x) { return -x; }},
      {"abs", [](auto& x) { return abs(x); }, [](double x) { return std::fabs(x); }},
      {"exp", [](auto& x) { return exp(x); }, [](double x) { return std::exp(x); }, -80, 80},
      {"log", [](auto& x) { return log(x); }, [](double x) { return std::log(x); }, 0.01, 100},
      {"sqrt", [](auto& x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 100},
      {"rsqrt", [](auto& x) { return rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); }, 0.01,
       100},
      {"tanh", [](auto& x) { return tanh(x); }, [](double x) { return std::tanh(x); }},
      {"sigmoid", [](auto& x) { return sigmoid(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20},
      {"relu", [](auto& x) { return relu(x); }, [](double x) { return x > 0 ? x : 0; }},
      {"sin", [](auto& x) { return sin(x); }, [](double x) { return std::sin(x); }},
      {"cos", [](auto& x) { return cos(x); }, [](double x) { return std::cos(x); }},
      {"square", [](auto& x) { return square(x); }, [](double x) { return x * x; }},
      {"reciprocal", [](auto& x) { return reciprocal(x); }, [](double x) { return 1 / x; }, 0.5, 3},
      {"sign", [](auto& x) { return sign(x); }, [](double x) { return double((0 < x) - (x < 0)); }},
      {"floor", [](auto& x) { return floor(x); }, [](double x) { return std::floor(x); }},
      {"ceil", [](auto& x) { return ceil(x); }, [](double x) { return std::ceil(x); }},
      {"round", [](auto& x) { return round(x); }, [](double x) { return std::nearbyint(x); }},
      {"log1p", [](auto& x) { return log1p(x); }, [](double x) { return std::log1p(x); }, -0.5, 3},
      {"expm1", [](auto& x) { return expm1(x); }, [](double x) { return std::expm1(x); }},
      {"clamp", [](auto& x) { return clamp(x, -1, 0.5); },
       [](double x) { return std::clamp(x, -1.0, 0.5); }},
      {"pow2", [](auto& x) { return pow(x, 2); }, [](double x) { return x * x; }},
      {"pow_half", [](auto& x) { return pow(x, 0.5); }, [](double x) { return std::sqrt(x); }, 0,
       9},
  };
  for (const UnaryCase& c : cases) {
    for (DType dt : {kFloat32, kFloat64}) {
      for (Shape s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{0}, Shape{100003}}) {
        Tensor x = uniform(s, dt, c.lo, c.hi);
        Tensor expected = make(ref_unary(x, c.ref), s);
        EXPECT_TRUE(all_close(c.op(x), expected, tolerance(dt) * 5, tolerance(dt)))
            << c.name << " " << dt << " " << s;
        if (x.dim() > 0)
          EXPECT_TRUE(
              all_close(c.op(noncontiguous(x)), expected, tolerance(dt) * 5, tolerance(dt)));
      }
    }
  }
}

TEST(Elementwise, ExpHandlesTheEdges) {
  Tensor x = tensor({-1000.0, -104.0, -87.5, 0.0, 88.7, 89.0, 1000.0, NAN, -INFINITY, INFINITY});
  std::vector<double> y = values(exp(x)), xs = values(x);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[2] / std::exp(xs[2]), 1.0, 1e-6);  // a subnormal result
  EXPECT_EQ(y[3], 1.0);
  EXPECT_NEAR(y[4] / std::exp(xs[4]), 1.0, 1e-6);
  EXPECT_TRUE(std::isinf(y[5]) && std::isinf(y[6]));
  EXPECT_TRUE(std::isnan(y[7]));
  EXPECT_EQ(y[8], 0.0);
  EXPECT_TRUE(std::isinf(y[9]));
}

TEST(Elementwise, IntegerOpsStayExact) {
  Tensor a = tensor({-7, 3, 100}), b = tensor({2, -3, 7});
  EXPECT_EQ(values(a + b), (std::vector<double>{-5, 0, 107}));
  EXPECT_EQ(values(a * b), (std::vector<double>{-14, -9, 700}));
  EXPECT_EQ(values(pow(a, b.clamp(0, std::nullopt))), (std::vector<double>{49, 1, 1e14}));
  EXPECT_EQ(values(abs(a)), (std::vector<double>{7, 3, 100}));
  EXPECT_EQ(abs(a).dtype(), kInt64);
  EXPECT_EQ(exp(tensor({0, 1})).dtype(), kFloat32);  // integer input, floating op
}

TEST(Elementwise, LargeTensorsTakeTheParallelPathCorrectly) {
  Tensor a = uniform({3, 1000003}), b = uniform({1000003});
  Tensor out = a * b + 1;
  Tensor expected =
      make(ref_binary(a, b, [](double x, double y) { return x * y + 1; }), {3, 1000003});
  EXPECT_TRUE(all_close(out, expected, 1e-5, 1e-6));
  Tensor t = uniform({1000, 1001}).t();  // transposed: strided inner loops in parallel
  EXPECT_TRUE(
      all_close(t * 2, make(ref_unary(t, [](double x) { return 2 * x; }), t.sizes()), 1e-6, 0));
}

TEST(Elementwise, InPlaceOps) {
  Tensor a = tensor({1.0, 2.0, 3.0});
  Tensor alias = a;
  a.add_(tensor({1.0, 1.0, 1.0})).mul_(2).sub_(1.0).div_(tensor({1.0, 3.0, 7.0}));
  EXPECT_TRUE(all_close(alias, tensor({3.0, 5.0 / 3, 1.0})));
  a.exp_().log_();
  EXPECT_TRUE(all_close(alias, tensor({3.0, 5.0 / 3, 1.0}), 1e-6, 1e-6));
  Tensor m = zeros({2, 3});
  m += tensor({1.0, 2.0, 3.0});  // broadcast into self
  EXPECT_EQ(values(m), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW_WITH(m.add_(zeros({4, 2, 3})), "doesn't match the broadcast shape");
  Tensor i = tensor({1, 2});
  EXPECT_THROW_WITH(i.mul_(1.5), "can't be cast to the desired output type int64");
  EXPECT_THROW_WITH(i.exp_(), "can't be cast to the desired output type int64");
  Tensor f = ones({2});
  f.add_(tensor({1, 2}));  // an integer operand into a float tensor is fine
  EXPECT_EQ(values(f), (std::vector<double>{2, 3}));
  Tensor c = tensor({-2.0, 0.5, 4.0});
  c.clamp_(-1, 1);
  EXPECT_EQ(values(c), (std::vector<double>{-1, 0.5, 1}));
}

TEST(Elementwise, WhereAndTernaryOps) {
  Tensor cond = tensor({true, false, true});
  EXPECT_EQ(values(where(cond, tensor({1.0, 2.0, 3.0}), tensor({-1.0}))),
            (std::vector<double>{1, -1, 3}));
  Tensor s = ones({3});
  EXPECT_TRUE(all_close(addcmul(s, tensor({1.0, 2.0, 3.0}), tensor({2.0, 2.0, 2.0}), 0.5),
                        tensor({2.0, 3.0, 4.0})));
  EXPECT_TRUE(all_close(addcdiv(s, tensor({1.0, 2.0, 3.0}), tensor({2.0, 2.0, 2.0})),
                        tensor({1.5, 2.0, 2.5})));
  EXPECT_TRUE(all_close(lerp(zeros({2}), tensor({2.0, 4.0}), 0.25), tensor({0.5, 1.0})));
  EXPECT_EQ(values(masked_fill(zeros({3}), cond, 7.0)), (std::vector<double>{7, 0, 7}));
  EXPECT_TRUE(logical_and(cond, tensor({true, true, false})).equal(tensor({true, false, false})));
  EXPECT_TRUE(logical_not(cond).equal(tensor({false, true, false})));
}

TEST(Elementwise, MixingDevicesIsAnErrorNamingBoth) {
  Tensor a = zeros({2});
  Tensor b = empty({2});
  EXPECT_NO_THROW(a + b);
  EXPECT_THROW_WITH(a + zeros({2}, Device("cuda")), "cuda");
}

TEST(Elementwise, UndefinedTensorsAreErrors) {
  EXPECT_THROW_WITH(Tensor() + ones({1}), "undefined");
}

TEST(Elementwise, AnInputOverlappingTheOutputIsAnError) {
  Tensor x = arange(5, kFloat32);
  EXPECT_THROW_WITH(x.slice(0, 1, 5).copy_(x.slice(0, 0, 4)), "refer to a single memory location");
  EXPECT_THROW_WITH(x.slice(0, 1, 5).add_(x.slice(0, 0, 4)), "refer to a single memory location");
  x.add_(x);                                 // the very same tensor is fine
  x.slice(0, 0, 2).copy_(x.slice(0, 3, 5));  // disjoint parts of one storage too
  EXPECT_EQ(values(x), (std::vector<double>{6, 8, 4, 6, 8}));
}

TEST(Elementwise, WhereWithAScalarPromotesLikeANumber) {
  Tensor r = where(tensor({true, false}), tensor({1, 2}), 0.5);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 0.5}));
}

}  // namespace
}  // namespace ember
