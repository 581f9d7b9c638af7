// The special functions as elementwise functors (special_math.h has the math): each computes in
// double and rounds once to the compute type. Their rows join the unary and binary op tables.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/backend/functors/params.h"
#include "ember/backend/functors/special_math.h"

namespace ember {

#define EMBER_SPECIAL_UNARY(Name, expr)                       \
  template <typename T>                                       \
  struct Name {                                               \
    explicit EMBER_HOST_DEVICE Name(const UnaryParams&) {}    \
    EMBER_HOST_DEVICE T operator()(T in) const {              \
      double x = static_cast<double>(in);                     \
      return static_cast<T>(expr);                            \
    }                                                         \
  };

EMBER_SPECIAL_UNARY(LgammaFn, ::lgamma(x))
EMBER_SPECIAL_UNARY(DigammaFn, special_math::digamma(x))
EMBER_SPECIAL_UNARY(ErfinvFn, special_math::erfinv(x))
EMBER_SPECIAL_UNARY(I0Fn, special_math::i0(x))
EMBER_SPECIAL_UNARY(I0eFn, special_math::i0e(x))
EMBER_SPECIAL_UNARY(I1Fn, special_math::i1(x))
EMBER_SPECIAL_UNARY(I1eFn, special_math::i1e(x))
EMBER_SPECIAL_UNARY(NdtrFn, special_math::ndtr(x))
EMBER_SPECIAL_UNARY(NdtriFn, special_math::ndtri(x))
EMBER_SPECIAL_UNARY(LogNdtrFn, special_math::log_ndtr(x))
EMBER_SPECIAL_UNARY(ErfcxFn, special_math::erfcx(x))
EMBER_SPECIAL_UNARY(EntrFn, special_math::entr(x))
EMBER_SPECIAL_UNARY(BesselJ0Fn, special_math::bessel_j0(x))
EMBER_SPECIAL_UNARY(BesselJ1Fn, special_math::bessel_j1(x))
EMBER_SPECIAL_UNARY(BesselY0Fn, special_math::bessel_y0(x))
EMBER_SPECIAL_UNARY(BesselY1Fn, special_math::bessel_y1(x))
EMBER_SPECIAL_UNARY(BesselK0Fn, special_math::bessel_k0(x, false))
EMBER_SPECIAL_UNARY(BesselK1Fn, special_math::bessel_k1(x, false))
EMBER_SPECIAL_UNARY(ScaledBesselK0Fn, special_math::bessel_k0(x, true))
EMBER_SPECIAL_UNARY(ScaledBesselK1Fn, special_math::bessel_k1(x, true))
EMBER_SPECIAL_UNARY(SphericalBesselJ0Fn, special_math::spherical_bessel_j0(x))
EMBER_SPECIAL_UNARY(AiryAiFn, special_math::airy_ai(x))
#undef EMBER_SPECIAL_UNARY

/// psi^(n)(x), n = a.
template <typename T>
struct PolygammaFn {
  int64_t n;
  explicit EMBER_HOST_DEVICE PolygammaFn(const UnaryParams& p) : n(static_cast<int64_t>(p.a)) {}
  EMBER_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(
        special_math::polygamma(n, static_cast<double>(x), std::is_same_v<T, float>));
  }
};

#define EMBER_SPECIAL_BINARY(Name, expr)                       \
  template <typename T>                                        \
  struct Name {                                                \
    explicit EMBER_HOST_DEVICE Name(const BinaryParams&) {}    \
    EMBER_HOST_DEVICE T operator()(T in_a, T in_b) const {     \
      double a = static_cast<double>(in_a);                    \
      double b = static_cast<double>(in_b);                    \
      return static_cast<T>(expr);                             \
    }                                                          \
  };

// The polynomials take n as a value of the input's dtype, truncated (as PyTorch's kernels).
#define EMBER_POLYNOMIAL(Name, fn) \
  EMBER_SPECIAL_BINARY(Name, b != b ? b : special_math::fn(a, static_cast<int64_t>(b)))

EMBER_SPECIAL_BINARY(ZetaFn, special_math::zeta(a, b))
EMBER_SPECIAL_BINARY(Xlog1pyFn, special_math::xlog1py(a, b))
EMBER_SPECIAL_BINARY(IgammaFn, special_math::incomplete_gamma(a, b, false))
EMBER_SPECIAL_BINARY(IgammacFn, special_math::incomplete_gamma(a, b, true))
EMBER_POLYNOMIAL(ChebyshevTFn, chebyshev_t)
EMBER_POLYNOMIAL(ChebyshevUFn, chebyshev_u)
EMBER_POLYNOMIAL(ChebyshevVFn, chebyshev_v)
EMBER_POLYNOMIAL(ChebyshevWFn, chebyshev_w)
EMBER_SPECIAL_BINARY(ShiftedChebyshevTFn,
                     b != b ? b : special_math::shifted_chebyshev('t', a, static_cast<int64_t>(b)))
EMBER_SPECIAL_BINARY(ShiftedChebyshevUFn,
                     b != b ? b : special_math::shifted_chebyshev('u', a, static_cast<int64_t>(b)))
EMBER_SPECIAL_BINARY(ShiftedChebyshevVFn,
                     b != b ? b : special_math::shifted_chebyshev('v', a, static_cast<int64_t>(b)))
EMBER_SPECIAL_BINARY(ShiftedChebyshevWFn,
                     b != b ? b : special_math::shifted_chebyshev('w', a, static_cast<int64_t>(b)))
EMBER_POLYNOMIAL(HermiteHFn, hermite_h)
EMBER_POLYNOMIAL(HermiteHeFn, hermite_he)
EMBER_POLYNOMIAL(LaguerreLFn, laguerre_l)
EMBER_POLYNOMIAL(LegendrePFn, legendre_p)
#undef EMBER_POLYNOMIAL
#undef EMBER_SPECIAL_BINARY

/// The next representable value after a towards b, in the compute type (float or double).
template <typename T>
struct NextafterFn {
  explicit EMBER_HOST_DEVICE NextafterFn(const BinaryParams&) {}
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (sizeof(T) == sizeof(float))
      return ::nextafterf(a, b);
    else
      return ::nextafter(a, b);
  }
};

#define EMBER_SPECIAL_UNARY_OPS(_)                    \
  _(Lgamma, LgammaFn, Floating)                       \
  _(Digamma, DigammaFn, Floating)                     \
  _(Erfinv, ErfinvFn, Floating)                       \
  _(Polygamma, PolygammaFn, Floating)                 \
  _(I0, I0Fn, Floating)                               \
  _(I0e, I0eFn, Floating)                             \
  _(I1, I1Fn, Floating)                               \
  _(I1e, I1eFn, Floating)                             \
  _(Ndtr, NdtrFn, Floating)                           \
  _(Ndtri, NdtriFn, Floating)                         \
  _(LogNdtr, LogNdtrFn, Floating)                     \
  _(Erfcx, ErfcxFn, Floating)                         \
  _(Entr, EntrFn, Floating)                           \
  _(BesselJ0, BesselJ0Fn, Floating)                   \
  _(BesselJ1, BesselJ1Fn, Floating)                   \
  _(BesselY0, BesselY0Fn, Floating)                   \
  _(BesselY1, BesselY1Fn, Floating)                   \
  _(ModifiedBesselK0, BesselK0Fn, Floating)           \
  _(ModifiedBesselK1, BesselK1Fn, Floating)           \
  _(ScaledModifiedBesselK0, ScaledBesselK0Fn, Floating) \
  _(ScaledModifiedBesselK1, ScaledBesselK1Fn, Floating) \
  _(SphericalBesselJ0, SphericalBesselJ0Fn, Floating) \
  _(AiryAi, AiryAiFn, Floating)

#define EMBER_SPECIAL_BINARY_OPS(_)                          \
  _(Zeta, ZetaFn, Floating)                                  \
  _(Xlog1py, Xlog1pyFn, Floating)                            \
  _(Igamma, IgammaFn, Floating)                              \
  _(Igammac, IgammacFn, Floating)                            \
  _(ChebyshevPolynomialT, ChebyshevTFn, Floating)            \
  _(ChebyshevPolynomialU, ChebyshevUFn, Floating)            \
  _(ChebyshevPolynomialV, ChebyshevVFn, Floating)            \
  _(ChebyshevPolynomialW, ChebyshevWFn, Floating)            \
  _(ShiftedChebyshevPolynomialT, ShiftedChebyshevTFn, Floating) \
  _(ShiftedChebyshevPolynomialU, ShiftedChebyshevUFn, Floating) \
  _(ShiftedChebyshevPolynomialV, ShiftedChebyshevVFn, Floating) \
  _(ShiftedChebyshevPolynomialW, ShiftedChebyshevWFn, Floating) \
  _(HermitePolynomialH, HermiteHFn, Floating)                \
  _(HermitePolynomialHe, HermiteHeFn, Floating)              \
  _(LaguerrePolynomialL, LaguerreLFn, Floating)              \
  _(LegendrePolynomialP, LegendrePFn, Floating)              \
  _(Nextafter, NextafterFn, Floating)

}  // namespace ember
