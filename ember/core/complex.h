// The complex element types, complex64 and complex128: a pair (real, imag) laid out as C's and
// NumPy's complex, so that tensors share memory with NumPy, DLPack and BLAS's c/z routines.
// Arithmetic is written here for host and device; the transcendental functions go through
// std::complex on the host (PyTorch's CPU kernels do the same), so results match PyTorch's.
#pragma once

#include <cmath>
#include <complex>
#include <type_traits>

#include "ember/core/half.h"
#include "ember/core/macros.h"

namespace ember {

template <typename T>
struct alignas(2 * sizeof(T)) Complex {
  T re{};
  T im{};

  Complex() = default;
  // Implicit from the real type, so that functors written for real T (`T(1) + x`) also compile.
  EMBER_HOST_DEVICE constexpr Complex(T r, T i = T(0)) : re(r), im(i) {}  // NOLINT
  template <typename U>
  EMBER_HOST_DEVICE explicit constexpr Complex(const Complex<U>& c)
      : re(static_cast<T>(c.re)), im(static_cast<T>(c.im)) {}
  Complex(const std::complex<T>& c) : re(c.real()), im(c.imag()) {}  // NOLINT

  EMBER_HOST_DEVICE constexpr T real() const { return re; }
  EMBER_HOST_DEVICE constexpr T imag() const { return im; }
  std::complex<T> std() const { return {re, im}; }

  // Complex to real drops the imaginary part (PyTorch's copy_ into a real tensor, with a warning
  // there); to bool is "not zero".
  EMBER_HOST_DEVICE explicit constexpr operator bool() const { return re != T(0) || im != T(0); }
  template <typename U, std::enable_if_t<!std::is_same_v<U, bool> && std::is_arithmetic_v<U>, int> = 0>
  EMBER_HOST_DEVICE explicit constexpr operator U() const {
    return static_cast<U>(re);
  }
  EMBER_HOST_DEVICE explicit operator Half() const { return Half(static_cast<float>(re)); }
  EMBER_HOST_DEVICE explicit operator BFloat16() const { return BFloat16(static_cast<float>(re)); }

  EMBER_HOST_DEVICE Complex& operator+=(const Complex& b) {
    re += b.re;
    im += b.im;
    return *this;
  }
  EMBER_HOST_DEVICE Complex& operator-=(const Complex& b) {
    re -= b.re;
    im -= b.im;
    return *this;
  }
  EMBER_HOST_DEVICE Complex& operator*=(const Complex& b) { return *this = *this * b; }
  EMBER_HOST_DEVICE Complex& operator/=(const Complex& b) { return *this = *this / b; }

  EMBER_HOST_DEVICE friend constexpr Complex operator+(const Complex& a, const Complex& b) {
    return {a.re + b.re, a.im + b.im};
  }
  EMBER_HOST_DEVICE friend constexpr Complex operator-(const Complex& a, const Complex& b) {
    return {a.re - b.re, a.im - b.im};
  }
  EMBER_HOST_DEVICE friend constexpr Complex operator-(const Complex& a) { return {-a.re, -a.im}; }
  EMBER_HOST_DEVICE friend constexpr Complex operator*(const Complex& a, const Complex& b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  // Smith's algorithm (NumPy's and PyTorch's): no overflow from squaring the divisor.
  EMBER_HOST_DEVICE friend Complex operator/(const Complex& a, const Complex& b) {
    T c = b.re, d = b.im;
    T ac = c < T(0) ? -c : c, ad = d < T(0) ? -d : d;
    if (ac >= ad) {
      if (ac == T(0) && ad == T(0)) return {a.re / ac, a.im / ad};
      T rat = d / c, scl = T(1) / (c + d * rat);
      return {(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
    }
    T rat = c / d, scl = T(1) / (d + c * rat);
    return {(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
  }
  EMBER_HOST_DEVICE friend constexpr bool operator==(const Complex& a, const Complex& b) {
    return a.re == b.re && a.im == b.im;
  }
  EMBER_HOST_DEVICE friend constexpr bool operator!=(const Complex& a, const Complex& b) {
    return !(a == b);
  }
};

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<Complex<T>> : std::true_type {};
template <typename T>
inline constexpr bool is_complex_v = IsComplex<T>::value;

/// The real type of a complex type (T itself for the others).
template <typename T>
struct RealOf {
  using type = T;
};
template <typename T>
struct RealOf<Complex<T>> {
  using type = T;
};
template <typename T>
using real_of_t = typename RealOf<T>::type;

template <typename T>
EMBER_HOST_DEVICE constexpr Complex<T> conj(const Complex<T>& z) {
  return {z.re, -z.im};
}

}  // namespace ember
