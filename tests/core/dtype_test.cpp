#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "ember/core/dtype.h"
#include "ember/core/half.h"

namespace ember {
namespace {

TEST(DType, SizesAndNames) {
  EXPECT_EQ(itemsize(kBool), 1u);
  EXPECT_EQ(itemsize(kUInt8), 1u);
  EXPECT_EQ(itemsize(kInt8), 1u);
  EXPECT_EQ(itemsize(kInt16), 2u);
  EXPECT_EQ(integral_min(kInt16), -32768);
  EXPECT_EQ(integral_max(kInt8), 127);
  EXPECT_EQ(itemsize(kInt32), 4u);
  EXPECT_EQ(itemsize(kInt64), 8u);
  EXPECT_EQ(itemsize(kFloat16), 2u);
  EXPECT_EQ(itemsize(kBFloat16), 2u);
  EXPECT_EQ(itemsize(kFloat32), 4u);
  EXPECT_EQ(itemsize(kFloat64), 8u);
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(kInt16), "int16");
  EXPECT_TRUE(is_floating_point(kFloat16));
  EXPECT_FALSE(is_floating_point(kInt64));
  EXPECT_TRUE(is_integral(kBool, true));
  EXPECT_FALSE(is_integral(kBool, false));
}

// torch.promote_types for every pair of ember's dtypes (checked against PyTorch 1.13).
TEST(DType, PromotionTableMatchesPyTorch) {
  const DType order[] = {kBool,    kUInt8,    kInt8,    kInt16,   kInt32,
                         kInt64,   kFloat16,  kBFloat16, kFloat32, kFloat64};
  const DType b = kBool, u = kUInt8, c = kInt8, s = kInt16, i = kInt32, l = kInt64, h = kFloat16,
              bf = kBFloat16, f = kFloat32, d = kFloat64;
  const DType expected[10][10] = {
      /* bool  */ {b, u, c, s, i, l, h, bf, f, d},
      /* uint8 */ {u, u, s, s, i, l, h, bf, f, d},
      /* int8  */ {c, s, c, s, i, l, h, bf, f, d},
      /* int16 */ {s, s, s, s, i, l, h, bf, f, d},
      /* int32 */ {i, i, i, i, i, l, h, bf, f, d},
      /* int64 */ {l, l, l, l, l, l, h, bf, f, d},
      /* f16   */ {h, h, h, h, h, h, h, f, f, d},
      /* bf16  */ {bf, bf, bf, bf, bf, bf, f, bf, f, d},
      /* f32   */ {f, f, f, f, f, f, f, f, f, d},
      /* f64   */ {d, d, d, d, d, d, d, d, d, d},
  };
  for (int r = 0; r < 10; ++r)
    for (int k = 0; k < 10; ++k)
      EXPECT_EQ(promote_types(order[r], order[k]), expected[r][k]) << order[r] << " + " << order[k];
}

// complex32 with every other dtype (PyTorch 1.13's torch.promote_types): the complex type whose
// parts hold both, complex32 only where float16 holds the real side.
TEST(DType, Complex32PromotesAsPyTorch) {
  const DType c32 = kComplex32, c64 = kComplex64, c128 = kComplex128;
  const std::pair<DType, DType> cases[] = {
      {kBool, c32},     {kUInt8, c32},    {kInt8, c32},     {kInt16, c32},  {kInt32, c32},
      {kInt64, c32},    {kFloat16, c32},  {kBFloat16, c64}, {kFloat32, c64}, {kFloat64, c128},
      {kComplex32, c32}, {kComplex64, c64}, {kComplex128, c128}};
  for (auto [other, want] : cases) {
    EXPECT_EQ(promote_types(c32, other), want) << other;
    EXPECT_EQ(promote_types(other, c32), want) << other;
  }
  EXPECT_EQ(itemsize(c32), 4u);
  EXPECT_EQ(to_real_dtype(c32), kFloat16);
  EXPECT_EQ(to_complex_dtype(kFloat16), c32);
  EXPECT_STREQ(dtype_name(c32), "complex32");
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(static_cast<float>(Half(v)), v) << v;
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 2048)), 1.0f);  // tie goes to even
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
}

TEST(BFloat16, RoundTripsAndRounds) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(BFloat16(3.140625f).bits, 0x4049);
  EXPECT_EQ(static_cast<float>(BFloat16(1.01171875f)), 1.015625f);  // tie to even, upwards
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);       // tie to even
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

}  // namespace
}  // namespace ember
