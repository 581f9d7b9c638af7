// Scalar math used by the functors, for host and device. On the host, exp is a branch-free
// polynomial so that g++ vectorises loops over it (glibc's expf is a call per element); on the
// device the CUDA intrinsics are used.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/core/complex.h"
#include "ember/core/half.h"
#include "ember/core/macros.h"

namespace ember::math {

namespace detail {
// exp(x) = 2^n * e^r with n = round(x / ln 2), |r| <= ln2 / 2; e^r by Cephes' degree-6 polynomial
// (about 1 ulp). Returns e^r and sets n. x must be clamped to where 2^n stays finite.
EMBER_HOST_DEVICE inline float exp_reduced(float x, int32_t& n_out) {
  float n = x * 1.44269504088896341f + 12582912.0f;  // round to nearest via the float mantissa
  n -= 12582912.0f;
  float r = x - n * 0.693359375f;
  r -= n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  n_out = static_cast<int32_t>(n);
  return p * r * r + r + 1.0f;
}
EMBER_HOST_DEVICE inline float pow2(int32_t n) {
  return ember::detail::bits_float(static_cast<uint32_t>(n + 127) << 23);
}
}  // namespace detail

EMBER_HOST_DEVICE inline float exp(float x) {
#if defined(__CUDA_ARCH__)
  return ::expf(x);
#else
  // Branch-free so that loops over it vectorise. 2^n is applied as two factors so that results in
  // the subnormal range and overflow to infinity come out right.
  bool nan = x != x;
  float xc = nan ? 0.0f : (x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x));
  int32_t n;
  float p = detail::exp_reduced(xc, n);
  int32_t n1 = n >> 1;
  float result = p * detail::pow2(n1) * detail::pow2(n - n1);
  return nan ? x : result;
#endif
}
EMBER_HOST_DEVICE inline double exp(double x) { return ::exp(x); }

/// exp for x <= 0 with results below about 1.6e-38 flushed to zero: softmax's exp(x - max), where
/// masked (-inf) entries must come out exactly 0. About a third cheaper than exp(float): one scale
/// factor, no overflow or subnormal handling.
EMBER_HOST_DEVICE inline float exp_nonpositive(float x) {
#if defined(__CUDA_ARCH__)
  return ::__expf(x);
#else
  float xc = x < -87.0f ? -87.0f : x;  // NaN passes through the comparison and stays NaN
  int32_t n;
  float p = detail::exp_reduced(xc, n);
  return x < -87.0f ? 0.0f : p * detail::pow2(n);
#endif
}
EMBER_HOST_DEVICE inline double exp_nonpositive(double x) { return ::exp(x); }

EMBER_HOST_DEVICE inline float log(float x) { return ::logf(x); }
EMBER_HOST_DEVICE inline double log(double x) { return ::log(x); }
EMBER_HOST_DEVICE inline float log1p(float x) { return ::log1pf(x); }
EMBER_HOST_DEVICE inline double log1p(double x) { return ::log1p(x); }
EMBER_HOST_DEVICE inline float expm1(float x) { return ::expm1f(x); }
EMBER_HOST_DEVICE inline double expm1(double x) { return ::expm1(x); }
EMBER_HOST_DEVICE inline float sqrt(float x) { return ::sqrtf(x); }
EMBER_HOST_DEVICE inline double sqrt(double x) { return ::sqrt(x); }
EMBER_HOST_DEVICE inline float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / ::sqrtf(x);
#endif
}
EMBER_HOST_DEVICE inline double rsqrt(double x) { return 1.0 / ::sqrt(x); }
EMBER_HOST_DEVICE inline float tanh(float x) {
#if defined(__CUDA_ARCH__)
  return ::tanhf(x);
#else
  // Branch-free so that loops over it vectorise (the recurrent cells call it per element):
  // Cephes' odd polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above, each about 2 ulp.
  float a = x < 0.0f ? -x : x;
  float z = x * x;
  float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                  1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
  float big = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  big = x < 0.0f ? -big : big;
  return a < 0.625f ? small : (x != x ? x : big);
#endif
}
EMBER_HOST_DEVICE inline double tanh(double x) { return ::tanh(x); }
EMBER_HOST_DEVICE inline float sin(float x) { return ::sinf(x); }
EMBER_HOST_DEVICE inline double sin(double x) { return ::sin(x); }
EMBER_HOST_DEVICE inline float cos(float x) { return ::cosf(x); }
EMBER_HOST_DEVICE inline double cos(double x) { return ::cos(x); }
EMBER_HOST_DEVICE inline float floor(float x) { return ::floorf(x); }
EMBER_HOST_DEVICE inline double floor(double x) { return ::floor(x); }
EMBER_HOST_DEVICE inline float ceil(float x) { return ::ceilf(x); }
EMBER_HOST_DEVICE inline double ceil(double x) { return ::ceil(x); }
EMBER_HOST_DEVICE inline float round(float x) { return ::nearbyintf(x); }  // half to even
EMBER_HOST_DEVICE inline double round(double x) { return ::nearbyint(x); }
EMBER_HOST_DEVICE inline float pow(float a, float b) { return ::powf(a, b); }
EMBER_HOST_DEVICE inline double pow(double a, double b) { return ::pow(a, b); }
EMBER_HOST_DEVICE inline float erf(float x) { return ::erff(x); }
EMBER_HOST_DEVICE inline double erf(double x) { return ::erf(x); }
/// erf for GELU, where it is scaled by x / 2: branch-free so that loops vectorise (glibc's erff is
/// a call per element, a third of a GPT step's GELU time). A rational approximation on [-4, 4]
/// (erf is +-1 in float32 beyond), the one Eigen and XLA use: at most 7 ulp (4e-7 absolute)
/// against erf in double. Double, and the device, keep the library's erf.
EMBER_HOST_DEVICE inline float erf_approx(float a) {
#if defined(__CUDA_ARCH__)
  return ::erff(a);
#else
  float x = a < -4.0f ? -4.0f : (a > 4.0f ? 4.0f : a);
  float x2 = x * x;
  float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = x2 * -1.45660718464996e-05f - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return a != a ? a : x * p / q;
#endif
}
EMBER_HOST_DEVICE inline double erf_approx(double x) { return ::erf(x); }
template <typename T>
EMBER_HOST_DEVICE inline T erf_approx(T x) {  // Half, BFloat16: through float
  return T(erf_approx(static_cast<float>(x)));
}
EMBER_HOST_DEVICE inline float erfc(float x) { return ::erfcf(x); }
EMBER_HOST_DEVICE inline double erfc(double x) { return ::erfc(x); }
EMBER_HOST_DEVICE inline float log2(float x) { return ::log2f(x); }
EMBER_HOST_DEVICE inline double log2(double x) { return ::log2(x); }
EMBER_HOST_DEVICE inline float log10(float x) { return ::log10f(x); }
EMBER_HOST_DEVICE inline double log10(double x) { return ::log10(x); }
EMBER_HOST_DEVICE inline float exp2(float x) { return ::exp2f(x); }
EMBER_HOST_DEVICE inline double exp2(double x) { return ::exp2(x); }
EMBER_HOST_DEVICE inline float tan(float x) { return ::tanf(x); }
EMBER_HOST_DEVICE inline double tan(double x) { return ::tan(x); }
EMBER_HOST_DEVICE inline float sinh(float x) { return ::sinhf(x); }
EMBER_HOST_DEVICE inline double sinh(double x) { return ::sinh(x); }
EMBER_HOST_DEVICE inline float cosh(float x) { return ::coshf(x); }
EMBER_HOST_DEVICE inline double cosh(double x) { return ::cosh(x); }
EMBER_HOST_DEVICE inline float asin(float x) { return ::asinf(x); }
EMBER_HOST_DEVICE inline double asin(double x) { return ::asin(x); }
EMBER_HOST_DEVICE inline float acos(float x) { return ::acosf(x); }
EMBER_HOST_DEVICE inline double acos(double x) { return ::acos(x); }
EMBER_HOST_DEVICE inline float atan(float x) { return ::atanf(x); }
EMBER_HOST_DEVICE inline double atan(double x) { return ::atan(x); }
EMBER_HOST_DEVICE inline float asinh(float x) { return ::asinhf(x); }
EMBER_HOST_DEVICE inline double asinh(double x) { return ::asinh(x); }
EMBER_HOST_DEVICE inline float acosh(float x) { return ::acoshf(x); }
EMBER_HOST_DEVICE inline double acosh(double x) { return ::acosh(x); }
EMBER_HOST_DEVICE inline float atanh(float x) { return ::atanhf(x); }
EMBER_HOST_DEVICE inline double atanh(double x) { return ::atanh(x); }
EMBER_HOST_DEVICE inline float atan2(float a, float b) { return ::atan2f(a, b); }
EMBER_HOST_DEVICE inline double atan2(double a, double b) { return ::atan2(a, b); }
EMBER_HOST_DEVICE inline float hypot(float a, float b) { return ::hypotf(a, b); }
EMBER_HOST_DEVICE inline double hypot(double a, double b) { return ::hypot(a, b); }
EMBER_HOST_DEVICE inline float trunc(float x) { return ::truncf(x); }
EMBER_HOST_DEVICE inline double trunc(double x) { return ::trunc(x); }
EMBER_HOST_DEVICE inline float fmod(float a, float b) { return ::fmodf(a, b); }
EMBER_HOST_DEVICE inline double fmod(double a, double b) { return ::fmod(a, b); }
EMBER_HOST_DEVICE inline float abs(float x) { return ::fabsf(x); }
EMBER_HOST_DEVICE inline double abs(double x) { return ::fabs(x); }

template <typename T>
EMBER_HOST_DEVICE inline bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}

// Integer versions where the op is defined on integers.
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T abs(T x) {
  if constexpr (std::is_unsigned_v<T>)
    return x;
  else
    return x < 0 ? -x : x;
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T pow(T base, T exp) {
  if (exp < 0) return base == 1 ? 1 : (base == T(-1) ? (exp % 2 ? T(-1) : T(1)) : 0);
  T result = 1;
  while (exp) {
    if (exp & 1) result *= base;
    base *= base;
    exp >>= 1;
  }
  return result;
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T floor(T x) {
  return x;
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T ceil(T x) {
  return x;
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T round(T x) {
  return x;
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
EMBER_HOST_DEVICE inline T trunc(T x) {
  return x;
}

/// a << b and a >> b as PyTorch's (integers): shifting by the bit width or more (or by a negative
/// amount) gives 0 to the left and the sign to the right.
template <typename T>
EMBER_HOST_DEVICE inline T left_shift(T a, T b) {
  if constexpr (std::is_same_v<T, bool> || !std::is_integral_v<T>) {
    return a;
  } else {
    using U = std::make_unsigned_t<T>;
    constexpr T bits = static_cast<T>(sizeof(T) * 8);
    if ((std::is_signed_v<T> && b < 0) || b >= bits) return 0;
    return static_cast<T>(static_cast<U>(a) << b);
  }
}
template <typename T>
EMBER_HOST_DEVICE inline T right_shift(T a, T b) {
  if constexpr (std::is_same_v<T, bool> || !std::is_integral_v<T>) {
    return a;
  } else {
    using U = std::make_unsigned_t<T>;
    constexpr U bits = static_cast<U>(sizeof(T) * 8);
    if (static_cast<U>(b) >= bits) return a >> (bits - 1);
    return a >> b;
  }
}

/// Python's a % b (the sign of b) and a // b (toward -inf), PyTorch's remainder and floor_divide;
/// integer division by zero is left to the op layer to reject.
template <typename T>
EMBER_HOST_DEVICE inline T remainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    T r = fmod(a, b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  }
}
template <typename T>
EMBER_HOST_DEVICE inline T floor_divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    // PyTorch's div_floor: (a - fmod(a, b)) / b, one lower where the remainder's sign differs
    // from b's, then rounded to the nearest integer (the division may land just off one).
    if (b == T(0)) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return a / b < T(0) ? T(-0.0) : T(0);
    T fl = floor(div);
    return div - fl > T(0.5) ? fl + T(1) : fl;
  }
}
template <typename T>
EMBER_HOST_DEVICE inline T fmod_any(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return b == 0 ? T(0) : T(a % b);
  else
    return fmod(a, b);
}

// NaN-propagating max and min, like PyTorch's maximum / minimum and max reductions.
template <typename T>
EMBER_HOST_DEVICE inline T max(T a, T b) {
  return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b));
}
template <typename T>
EMBER_HOST_DEVICE inline T min(T a, T b) {
  return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b));
}

// Complex versions (CPU only: the CUDA backend does not take complex tensors yet), through
// std::complex as PyTorch's CPU kernels do.
#define EMBER_COMPLEX_FROM_STD(name)               \
  template <typename T>                            \
  inline Complex<T> name(Complex<T> z) {           \
    return Complex<T>(std::name(z.std()));         \
  }
EMBER_COMPLEX_FROM_STD(log)
EMBER_COMPLEX_FROM_STD(log10)
EMBER_COMPLEX_FROM_STD(sqrt)
EMBER_COMPLEX_FROM_STD(sin)
EMBER_COMPLEX_FROM_STD(cos)
EMBER_COMPLEX_FROM_STD(tan)
EMBER_COMPLEX_FROM_STD(sinh)
EMBER_COMPLEX_FROM_STD(cosh)
EMBER_COMPLEX_FROM_STD(tanh)
EMBER_COMPLEX_FROM_STD(asin)
EMBER_COMPLEX_FROM_STD(acos)
EMBER_COMPLEX_FROM_STD(atan)
EMBER_COMPLEX_FROM_STD(asinh)
EMBER_COMPLEX_FROM_STD(acosh)
EMBER_COMPLEX_FROM_STD(atanh)
#undef EMBER_COMPLEX_FROM_STD
// exp(a + bi) = exp(a) (cos b + i sin b), as PyTorch's vectorised CPU kernel computes it (std::exp
// of a complex is several times slower).
template <typename T>
inline Complex<T> exp(Complex<T> z) {
  T e = exp(z.re);
  return {e * std::cos(z.im), e * std::sin(z.im)};
}
template <typename T>
inline Complex<T> rsqrt(Complex<T> z) {
  return Complex<T>(T(1)) / sqrt(z);
}
template <typename T>
inline Complex<T> log2(Complex<T> z) {
  return Complex<T>(std::log(z.std()) / std::log(T(2)));
}
template <typename T>
inline Complex<T> exp2(Complex<T> z) {
  return Complex<T>(std::exp(z.std() * std::log(T(2))));
}
template <typename T>
inline Complex<T> log1p(Complex<T> z) {
  return Complex<T>(std::log(T(1) + z.std()));
}
template <typename T>
inline Complex<T> expm1(Complex<T> z) {
  return Complex<T>(std::exp(z.std()) - T(1));
}
template <typename T>
inline Complex<T> pow(Complex<T> a, Complex<T> b) {
  return Complex<T>(std::pow(a.std(), b.std()));
}

}  // namespace ember::math
