// The special functions of torch.special (and lgamma, digamma, polygamma, erfinv, i0, igamma) for
// host and device, in double: a float input is computed in double and rounded once, so the
// result is within an ulp of the true value (PyTorch's float kernels are within a few).
//
// Each function is a classical method chosen so that its error is far below PyTorch's test
// tolerances (float64: 1e-7 relative or absolute): power series where their terms do not cancel
// much, asymptotic (Hankel, Poincare) expansions where the argument is large, Euler-Maclaurin for
// the Hurwitz zeta function, continued fractions for the incomplete gamma function, and the
// trapezoidal rule (exponentially accurate for these integrands) for the K Bessel functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/core/macros.h"

namespace ember::special_math {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kEulerGamma = 0.57721566490153286061;
inline constexpr double kSqrt2 = 1.41421356237309504880;
inline constexpr double kSqrtPi = 1.77245385090551602730;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kEps = 1.1102230246251565e-16;  // 2^-53

// --- gamma family ---------------------------------------------------------------------------

/// psi(x) = d/dx log Gamma(x). psi(+0) = -inf, psi(-0) = +inf, NaN at the negative integers.
EMBER_HOST_DEVICE inline double digamma(double x) {
  if (x == 0) return ::copysign(kInf, -x);
  if (x < 0) {
    if (x == ::floor(x)) return kNaN;
    // Reflection: psi(1 - x) - psi(x) = pi / tan(pi x).
    return digamma(1 - x) - kPi / ::tan(kPi * x);
  }
  double shift = 0;
  while (x < 10) {  // psi(x) = psi(x + 1) - 1/x
    shift -= 1 / x;
    x += 1;
  }
  if (x == kInf) return x;
  // Asymptotic: log x - 1/(2x) - sum B_2k / (2k x^2k).
  double z = 1 / (x * x);
  double series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 -
                  z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return shift + ::log(x) - 0.5 / x - series;
}

/// psi'(x), the trigamma function. `single`: sin(pi x) of the reflection in float, as PyTorch's
/// float32 kernel computes it, so that the finite values it gives at the poles (the non-positive
/// integers, where float's pi x is not a multiple of pi) are PyTorch's.
EMBER_HOST_DEVICE inline double trigamma(double x, bool single = false) {
  double sign = 1, result = 0;
  if (x < 0.5) {
    // Reflection: psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x).
    double s = single ? static_cast<double>(::sinf(static_cast<float>(kPi) *
                                                   static_cast<float>(x)))
                      : ::sin(kPi * x);
    if (s == 0) return kInf;
    sign = -1;
    result = -kPi * kPi / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 10; ++i) {
    result += 1 / (x * x);
    x += 1;
  }
  double z = 1 / (x * x);
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
  double tail = (1 + 1 / (2 * x) + z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 -
                z * (1.0 / 30 - z * (5.0 / 66)))))) / x;
  return sign * (result + tail);
}

/// The Hurwitz zeta function sum_k (k + q)^-x, by Euler-Maclaurin summation: the first terms
/// directly, the tail as an integral with Bernoulli corrections. x = 1 is a pole; x < 1 is NaN.
EMBER_HOST_DEVICE inline double zeta(double x, double q) {
  if (x == 1) return kInf;
  if (x < 1 || x != x || q != q) return kNaN;
  if (q <= 0) {
    if (q == ::floor(q)) return kInf;
    if (x != ::floor(x)) return kNaN;  // q^-x is not real
  }
  // (2k)! / B_2k for k = 1..12.
  constexpr double kFactorialOverBernoulli[12] = {
      12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18};
  double s = ::pow(q, -x);
  double a = q;
  double b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = ::pow(a, -x);
    s += b;
    if (::fabs(b / s) < kEps) return s;
  }
  double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double f = 1, k = 0;
  for (int j = 0; j < 12; ++j) {
    f *= x + k;
    b /= w;
    double t = f * b / kFactorialOverBernoulli[j];
    s += t;
    if (::fabs(t / s) < kEps) break;
    k += 1;
    f *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

/// psi^(n)(x): digamma and trigamma for n = 0, 1; (-1)^(n+1) n! zeta(n + 1, x) beyond.
EMBER_HOST_DEVICE inline double polygamma(int64_t n, double x, bool single = false) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x, single);
  double factorial = ::exp(::lgamma(static_cast<double>(n) + 1));
  return ((n % 2) ? 1.0 : -1.0) * factorial * zeta(static_cast<double>(n) + 1, x);
}

/// The regularized lower incomplete gamma P(a, x) (upper when `upper`): the series where it
/// converges fast (x < a + 1), the continued fraction (Lentz) for the complement elsewhere.
EMBER_HOST_DEVICE inline double incomplete_gamma(double a, double x, bool upper) {
  if (a != a || x != x || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : kNaN;
  if (x == 0) return upper ? 1.0 : 0.0;
  if (a == kInf) return x == kInf ? kNaN : (upper ? 1.0 : 0.0);
  if (x == kInf) return upper ? 0.0 : 1.0;
  double log_prefactor = a * ::log(x) - x - ::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term, ap = a;
    for (int i = 0; i < 100000; ++i) {
      ap += 1;
      term *= x / ap;
      sum += term;
      if (::fabs(term) < ::fabs(sum) * kEps) break;
    }
    double p = sum * ::exp(log_prefactor);
    return upper ? 1 - p : p;
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (::fabs(delta - 1) < kEps) break;
  }
  double q = ::exp(log_prefactor) * h;
  return upper ? q : 1 - q;
}

// --- error function family -------------------------------------------------------------------

/// Phi(x), the standard normal CDF.
EMBER_HOST_DEVICE inline double ndtr(double x) { return 0.5 * ::erfc(-x / kSqrt2); }

/// exp(x^2) erfc(x), finite where erfc underflows.
EMBER_HOST_DEVICE inline double erfcx(double x) {
  if (x != x) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2 * ::exp(x * x) - erfcx(-x);
  }
  if (x < 26) return ::exp(x * x) * ::erfc(x);
  // erfcx(x) ~ 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 + ...)
  double z = 1 / (2 * x * x), term = 1, sum = 1;
  for (int k = 1; k < 8; ++k) {
    term *= -(2 * k - 1) * z;
    sum += term;
  }
  return sum / (x * kSqrtPi);
}

/// log Phi(x), accurate far in both tails.
EMBER_HOST_DEVICE inline double log_ndtr(double x) {
  if (x < -1) return ::log(erfcx(-x / kSqrt2) / 2) - x * x / 2;
  return ::log1p(-::erfc(x / kSqrt2) / 2);
}

/// Phi^-1(p): Acklam's rational approximation, then one Halley step on Phi (full precision).
EMBER_HOST_DEVICE inline double ndtri(double p) {
  if (p != p || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p > 0.5) return -ndtri(1 - p);  // 1 - p is exact here
  constexpr double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                           1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                           6.680131188771972e+01, -1.328068155288572e+01};
  constexpr double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                           -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  constexpr double d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                           3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = ::sqrt(-2 * ::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  for (int i = 0; i < 2; ++i) {
    double e = ndtr(x) - p;
    double u = e * ::sqrt(2 * kPi) * ::exp(x * x / 2);
    x -= u / (1 + x * u / 2);
  }
  return x;
}

/// erf^-1(y) on [-1, 1]: +-inf at +-1, NaN outside. Newton on erf (erfc near +-1, where 1 - |y|
/// is exact) from the normal quantile.
EMBER_HOST_DEVICE inline double erfinv(double y) {
  if (y != y || y < -1 || y > 1) return kNaN;
  if (y == 1) return kInf;
  if (y == -1) return -kInf;
  if (y == 0) return y;
  double ay = ::fabs(y);
  double x = ay < 0.5 ? ndtri(0.5 + ay / 2) / kSqrt2 : -ndtri((1 - ay) / 2) / kSqrt2;
  for (int i = 0; i < 3; ++i) {
    double deriv = 2 / kSqrtPi * ::exp(-x * x);
    double e = ay < 0.5 ? ::erf(x) - ay : (1 - ay) - ::erfc(x);
    if (deriv == 0) break;
    x -= e / deriv;
  }
  return y < 0 ? -x : x;
}

/// -x log x: 0 at 0, -inf below.
EMBER_HOST_DEVICE inline double entr(double x) {
  if (x != x) return x;
  if (x > 0) return -x * ::log(x);
  return x == 0 ? 0.0 : -kInf;
}

/// x log1p(y), 0 where x is 0 (unless y is NaN).
EMBER_HOST_DEVICE inline double xlog1py(double x, double y) {
  if (y != y) return y;
  if (x == 0) return 0;
  return x * ::log1p(y);
}

// --- Bessel functions ------------------------------------------------------------------------

namespace detail {
/// The Hankel (large-argument) expansions of order nu: P, Q with J = sqrt(2/(pi x)) (P cos chi -
/// Q sin chi) and Y = sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (nu/2 + 1/4) pi; the
/// modified ones use the same a_k(nu) without alternating signs.
EMBER_HOST_DEVICE inline void hankel(double nu, double x, double& p, double& q) {
  double mu = 4 * nu * nu, term = 1;
  p = 1;
  q = 0;
  double last = kInf;
  for (int k = 1; k < 60; ++k) {
    term *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8 * x);
    if (::fabs(term) > last) break;  // the asymptotic series starts to grow: stop at its least term
    last = ::fabs(term);
    int r = k % 4;  // a_k / x^k goes to Q with sign (-1)^((k-1)/2) for odd k, to P for even k
    if (r == 1) q += term;
    if (r == 2) p -= term;
    if (r == 3) q -= term;
    if (r == 0) p += term;
    if (last < kEps * 1e-2) break;
  }
}

/// sum_k (-+ x^2/4)^k / (k! (k + n)!) (x/2)^n: J_n (alternating) or I_n.
EMBER_HOST_DEVICE inline double bessel_series(int n, double x, bool alternating) {
  double q = x * x / 4, term = 1, sum = 0;
  for (int k = 1; k <= n; ++k) term *= (x / 2) / k;
  for (int k = 0; k < 500; ++k) {
    sum += term;
    if (::fabs(term) < kEps * 1e-2 * ::fabs(sum)) break;
    term *= (alternating ? -q : q) / ((k + 1.0) * (k + 1.0 + n));
  }
  return sum;
}

/// sum_k (-+ x^2/4)^k / (k! (k + n)!) (x/2)^n (psi(k + 1) + psi(k + n + 1)), for Y_n and K_n.
EMBER_HOST_DEVICE inline double bessel_psi_series(int n, double x, bool alternating) {
  double q = x * x / 4, term = 1, sum = 0;
  for (int k = 1; k <= n; ++k) term *= (x / 2) / k;
  double psi_k = -kEulerGamma, psi_kn = -kEulerGamma;  // psi(1), then psi(n + 1)
  for (int k = 1; k <= n; ++k) psi_kn += 1.0 / k;
  for (int k = 0; k < 500; ++k) {
    double t = term * (psi_k + psi_kn);
    sum += t;
    if (k > 2 && ::fabs(t) < kEps * 1e-2 * ::fabs(sum)) break;
    term *= (alternating ? -q : q) / ((k + 1.0) * (k + 1.0 + n));
    psi_k += 1.0 / (k + 1);
    psi_kn += 1.0 / (k + 1 + n);
  }
  return sum;
}

/// K_n(x) e^x for n = 0, 1 and x > 0 by the trapezoidal rule on integral_0^inf e^(-x (cosh t -
/// 1)) cosh(n t) dt, whose error decays as exp(-pi^2 / h); the integrand's width is about
/// 1 / sqrt(x), which the step follows for large x.
EMBER_HOST_DEVICE inline double scaled_k_integral(int n, double x) {
  double h = ::fmin(0.2, 0.5 / ::sqrt(x));
  double sum = 0.5;  // t = 0: cosh(0) = 1
  for (int k = 1; k < 400; ++k) {
    double t = k * h, c = ::cosh(t);
    double f = ::exp(-x * (c - 1)) * (n ? c : 1.0);
    sum += f;
    if (f < kEps * 1e-3 * sum) break;
  }
  return sum * h;
}
}  // namespace detail

inline constexpr double kBesselSeriesLimit = 20;  // series below, Hankel above

// PyTorch's J0, J1, Y0, Y1, I0, I1 and Ai give NaN at +-inf (their limits are 0 or inf); ember
// gives the same.

EMBER_HOST_DEVICE inline double bessel_j0(double x) {
  x = ::fabs(x);
  if (x == kInf) return kNaN;
  if (x <= kBesselSeriesLimit) return detail::bessel_series(0, x, true);
  double p, q;
  detail::hankel(0, x, p, q);
  double chi = x - kPi / 4;
  return ::sqrt(2 / (kPi * x)) * (p * ::cos(chi) - q * ::sin(chi));
}

EMBER_HOST_DEVICE inline double bessel_j1(double x) {
  double ax = ::fabs(x);
  if (ax == kInf) return kNaN;
  double r;
  if (ax <= kBesselSeriesLimit) {
    r = detail::bessel_series(1, ax, true);
  } else {
    double p, q;
    detail::hankel(1, ax, p, q);
    double chi = ax - 3 * kPi / 4;
    r = ::sqrt(2 / (kPi * ax)) * (p * ::cos(chi) - q * ::sin(chi));
  }
  return x < 0 ? -r : r;
}

EMBER_HOST_DEVICE inline double bessel_y0(double x) {
  if (x != x || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return kNaN;
  if (x <= kBesselSeriesLimit) {
    // Y0 = (2/pi) (log(x/2) J0(x) - sum (-x^2/4)^k / (k!)^2 psi(k + 1)).
    return 2 / kPi * (::log(x / 2) * detail::bessel_series(0, x, true) -
                      detail::bessel_psi_series(0, x, true) / 2);
  }
  double p, q;
  detail::hankel(0, x, p, q);
  double chi = x - kPi / 4;
  return ::sqrt(2 / (kPi * x)) * (p * ::sin(chi) + q * ::cos(chi));
}

EMBER_HOST_DEVICE inline double bessel_y1(double x) {
  if (x != x || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return kNaN;
  if (x <= kBesselSeriesLimit) {
    // Y1 = (2/pi) log(x/2) J1(x) - 2/(pi x) - (1/pi) sum (-x^2/4)^k (x/2) (psi(k+1) + psi(k+2))
    //      / (k! (k+1)!).
    return 2 / kPi * ::log(x / 2) * detail::bessel_series(1, x, true) - 2 / (kPi * x) -
           detail::bessel_psi_series(1, x, true) / kPi;
  }
  double p, q;
  detail::hankel(1, x, p, q);
  double chi = x - 3 * kPi / 4;
  return ::sqrt(2 / (kPi * x)) * (p * ::sin(chi) + q * ::cos(chi));
}

namespace detail {
/// I_n(|x|) e^-|x| for n = 0, 1: the series (positive terms) below 30, the large-argument
/// expansion above.
EMBER_HOST_DEVICE inline double scaled_i(int n, double ax) {
  if (ax <= 30) return bessel_series(n, ax, false) * ::exp(-ax);
  double mu = 4.0 * n * n, term = 1, sum = 1;
  for (int k = 1; k < 40; ++k) {
    term *= -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8 * ax);
    sum += term;
    if (::fabs(term) < kEps * 1e-2) break;
  }
  return sum / ::sqrt(2 * kPi * ax);
}
}  // namespace detail

EMBER_HOST_DEVICE inline double i0e(double x) {
  if (x != x) return x;
  double ax = ::fabs(x);
  return ax == kInf ? 0.0 : detail::scaled_i(0, ax);
}
EMBER_HOST_DEVICE inline double i0(double x) {
  double ax = ::fabs(x);
  if (ax <= 30) return detail::bessel_series(0, ax, false);
  return ax == kInf ? kNaN : detail::scaled_i(0, ax) * ::exp(ax);
}
EMBER_HOST_DEVICE inline double i1e(double x) {
  if (x != x) return x;
  double ax = ::fabs(x);
  double r = ax == kInf ? 0.0 : detail::scaled_i(1, ax);
  return x < 0 ? -r : r;
}
EMBER_HOST_DEVICE inline double i1(double x) {
  double ax = ::fabs(x);
  double r = ax <= 30 ? detail::bessel_series(1, ax, false)
                      : (ax == kInf ? kNaN : detail::scaled_i(1, ax) * ::exp(ax));
  return x < 0 ? -r : r;
}

/// K0(x) e^x (scaled) or K0(x).
EMBER_HOST_DEVICE inline double bessel_k0(double x, bool scaled) {
  if (x != x || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  if (x <= 2) {
    // K0 = -(log(x/2) + gamma) I0(x) + sum (x^2/4)^k / (k!)^2 H_k.
    // (bessel_psi_series sums 2 (H_k - gamma) terms, hence no gamma here.)
    double k0 = -::log(x / 2) * detail::bessel_series(0, x, false) +
                detail::bessel_psi_series(0, x, false) / 2;
    return scaled ? k0 * ::exp(x) : k0;
  }
  double k0e = detail::scaled_k_integral(0, x);
  return scaled ? k0e : k0e * ::exp(-x);
}

EMBER_HOST_DEVICE inline double bessel_k1(double x, bool scaled) {
  if (x != x || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  if (x <= 2) {
    // K1 = 1/x + log(x/2) I1(x) - (1/2) sum (x^2/4)^k (x/2) (psi(k+1) + psi(k+2)) / (k!(k+1)!).
    double k1 = 1 / x + ::log(x / 2) * detail::bessel_series(1, x, false) -
                detail::bessel_psi_series(1, x, false) / 2;
    return scaled ? k1 * ::exp(x) : k1;
  }
  double k1e = detail::scaled_k_integral(1, x);
  return scaled ? k1e : k1e * ::exp(-x);
}

/// sin(x) / x.
EMBER_HOST_DEVICE inline double spherical_bessel_j0(double x) {
  if (::fabs(x) == kInf) return 0;
  if (::fabs(x) < 0.5) {
    double z = x * x;
    return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110 * (1 - z / 156)))));
  }
  return ::sin(x) / x;
}

/// Ai(x): the Maclaurin series on [-6, 5], the asymptotic expansions (decaying to the right,
/// oscillating to the left) beyond.
EMBER_HOST_DEVICE inline double airy_ai(double x) {
  if (x != x || ::fabs(x) == kInf) return kNaN;
  if (x >= -6 && x <= 5) {
    constexpr double c1 = 0.355028053887817239260, c2 = 0.258819403792806798405;
    double x3 = x * x * x, f = 1, g = x, tf = 1, tg = x;
    for (int k = 1; k < 200; ++k) {
      tf *= x3 / ((3.0 * k - 1) * (3.0 * k));
      tg *= x3 / ((3.0 * k) * (3.0 * k + 1));
      f += tf;
      g += tg;
      if (::fabs(tf) + ::fabs(tg) < kEps * 1e-3 * (::fabs(f) + ::fabs(g))) break;
    }
    return c1 * f - c2 * g;
  }
  double ax = ::fabs(x), zeta = 2.0 / 3 * ax * ::sqrt(ax);
  // u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_(k-1).
  double u = 1, p = 1, q = 0, sum = 1, last = kInf;
  for (int k = 1; k < 60; ++k) {
    u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216 * k);
    double term = u / ::pow(zeta, k);
    if (term > last) break;
    last = term;
    sum += (k % 2 ? -term : term);
    int r = k % 4;  // oscillatory: P takes even k with sign (-1)^(k/2), Q odd k with (-1)^((k-1)/2)
    if (r == 1) q += term;
    if (r == 2) p -= term;
    if (r == 3) q -= term;
    if (r == 0) p += term;
    if (term < kEps * 1e-2) break;
  }
  double amp = 1 / (kSqrtPi * ::pow(ax, 0.25));
  if (x > 0) return amp / 2 * ::exp(-zeta) * sum;
  double theta = zeta + kPi / 4;
  return amp * (::sin(theta) * p - ::cos(theta) * q);
}

// --- orthogonal polynomials (x, n): PyTorch's recurrences, with their closed forms for large n
// inside (-1, 1) and their values at the ends ---------------------------------------------------

EMBER_HOST_DEVICE inline double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  if (n > 6 && ::fabs(x) < 1) return ::cos(n * ::acos(x));
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}

EMBER_HOST_DEVICE inline double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 1) return (x > 0 || n % 2 == 0) ? n + 1.0 : -(n + 1.0);
  if (n > 8 && ::fabs(x) < 1) {
    double t = ::acos(x);
    if (::sin(t) != 0) return ::sin((n + 1) * t) / ::sin(t);
    return (n + 1) * ::cos((n + 1) * t) / x;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}

EMBER_HOST_DEVICE inline double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? n + n + 1.0 : -(n + n + 1.0);
  }
  if (n > 8 && ::fabs(x) < 1) {
    double t = ::acos(x);
    if (::sin(t / 2) != 1) return ::cos((n + 0.5) * t) / ::cos(t / 2);
    return n % 2 == 0 ? n + n + 1.0 : -(n + n + 1.0);
  }
  if (n == 0) return 1;
  if (n == 1) return x + x - 1;
  double p = 1, q = x + x - 1, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}

EMBER_HOST_DEVICE inline double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 1) {
    if (x > 0) return n + n + 1.0;
    return n % 2 == 0 ? 1 : -1;
  }
  if (n > 8 && ::fabs(x) < 1) {
    double t = ::acos(x);
    if (::cos(t / 2) != 1) return ::sin((n + 0.5) * t) / ::sin(t / 2);
    if (x > 0) return n + n + 1.0;
    return n % 2 == 0 ? 1 : -1;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x + 1;
  double p = 1, q = x + x + 1, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}

/// The shifted polynomials on [0, 1]: the above at 2x - 1.
EMBER_HOST_DEVICE inline double shifted_chebyshev(char kind, double x, int64_t n) {
  double y = x + x - 1;
  switch (kind) {
    case 't':
      return chebyshev_t(y, n);
    case 'u':
      return chebyshev_u(y, n);
    case 'v':
      return chebyshev_v(y, n);
    default:
      return chebyshev_w(y, n);
  }
}

/// The physicists' Hermite polynomial H_n(x).
EMBER_HOST_DEVICE inline double hermite_h(double x, int64_t n) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r = 0;
  for (int64_t k = 2; k < n + n; k += 2) {
    r = (x + x) * q - k * p;
    p = q;
    q = r;
  }
  return r;
}

/// The probabilists' Hermite polynomial He_n(x).
EMBER_HOST_DEVICE inline double hermite_he(double x, int64_t n) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = x * q - k * p;
    p = q;
    q = r;
  }
  return r;
}

EMBER_HOST_DEVICE inline double laguerre_l(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 0) return 1;
  if (n == 0) return 1;
  if (n == 1) return 1 - x;
  double p = 1, q = 1 - x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = (((k + k) + (1 - x)) * q - k * p) / (k + 1);
    p = q;
    q = r;
  }
  return r;
}

EMBER_HOST_DEVICE inline double legendre_p(double x, int64_t n) {
  if (n < 0) return 0;
  if (::fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = ((k + k + 1) * x * q - k * p) / (k + 1);
    p = q;
    q = r;
  }
  return r;
}

}  // namespace ember::special_math
