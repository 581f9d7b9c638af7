// The CPU's sin, cos and log of float32 through glibc's vector variants (backend/cpu/vector_math.h):
// an element's value does not depend on where it sits (a tail, a strided view, a fused block),
// special values are the scalar functions', and the results are within 2 ulp of float64's
// (4 for log, as glibc states).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/ember.h"

namespace ember {
namespace {

float ulps(float got, double want) {
  float w = static_cast<float>(want);
  float spacing = std::nextafter(std::fabs(w), std::numeric_limits<float>::infinity()) -
                  std::fabs(w);
  return static_cast<float>(std::fabs(static_cast<double>(got) - want) / spacing);
}

TEST(VectorMath, SinCosLogAgreeWherePlacedAndWithinTheirUlps) {
  manual_seed(0);
  Tensor x = randn({1003}) * 20.0;
  struct Case {
    Tensor (*fn)(const Tensor&);
    double (*ref)(double);
    float max_ulp;
    bool positive;
  };
  Case cases[] = {{sin, [](double v) { return std::sin(v); }, 2, false},
                  {cos, [](double v) { return std::cos(v); }, 2, false},
                  {log, [](double v) { return std::log(v); }, 4, true}};
  for (const Case& c : cases) {
    Tensor in = c.positive ? abs(x) + 1e-3 : x;
    Tensor whole = c.fn(in);
    // The same elements as a tail, one at a time, and through a strided view.
    Tensor tail = c.fn(in.slice(0, 995, 1003));
    EXPECT_TRUE(equal(tail, whole.slice(0, 995, 1003)));
    Tensor strided = c.fn(in.slice(0, 0, 1003, 3));
    EXPECT_TRUE(equal(strided, whole.slice(0, 0, 1003, 3)));
    EXPECT_TRUE(equal(c.fn(in.slice(0, 7, 8)), whole.slice(0, 7, 8)));
    const float* in_p = in.data_ptr<float>();
    const float* out_p = whole.data_ptr<float>();
    for (int64_t i = 0; i < in.numel(); ++i)
      EXPECT_LE(ulps(out_p[i], c.ref(in_p[i])), c.max_ulp) << "at " << in_p[i];
  }
  float inf = std::numeric_limits<float>::infinity();
  Tensor special = tensor({0.0, -0.0, static_cast<double>(inf), std::nan(""), 1e30});
  Tensor s = sin(special);
  EXPECT_EQ(s.data_ptr<float>()[0], 0.0f);
  EXPECT_TRUE(std::signbit(s.data_ptr<float>()[1]));
  EXPECT_TRUE(std::isnan(s.data_ptr<float>()[2]) && std::isnan(s.data_ptr<float>()[3]));
  EXPECT_NEAR(s.data_ptr<float>()[4], std::sin(1e30f), 1e-6);
  Tensor l = log(tensor({0.0, -1.0, static_cast<double>(inf)}));
  EXPECT_EQ(l.data_ptr<float>()[0], -inf);
  EXPECT_TRUE(std::isnan(l.data_ptr<float>()[1]));
  EXPECT_EQ(l.data_ptr<float>()[2], inf);
}

}  // namespace
}  // namespace ember
