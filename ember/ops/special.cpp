#include "ember/ops/special.h"

#include <cmath>

#include "ember/ops/autograd_support.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/unary_with_grad.h"

namespace ember {
namespace {

constexpr double kSqrtTwoPi = 2.5066282746310002;
constexpr double kHalfSqrtPi = 0.88622692545275801;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;

// I1's and I1e's derivatives are 1/2 at 0, where the formula divides by x.
Tensor at_zero(const Tensor& x, const Tensor& value, double v) {
  return where(eq(x, 0), scalar_tensor(v, value.options()), value);
}

}  // namespace

EMBER_UNARY_WITH_GRAD(lgamma, Lgamma, "LgammaBackward0", true, g* digamma(x))
EMBER_UNARY_WITH_GRAD(digamma, Digamma, "DigammaBackward0", true, g* polygamma(1, x))
EMBER_UNARY_WITH_GRAD(erfinv, Erfinv, "ErfinvBackward0", false,
                      g* exp(out * out) * kHalfSqrtPi)
EMBER_UNARY_WITH_GRAD(i0, I0, "I0Backward0", true, g* special::i1(x))
EMBER_UNARY_INPLACE(lgamma, Lgamma)
EMBER_UNARY_INPLACE(digamma, Digamma)
EMBER_UNARY_INPLACE(erfinv, Erfinv)
EMBER_UNARY_INPLACE(i0, I0)

Tensor polygamma(int64_t n, const Tensor& x) {
  EMBER_OP(polygamma, n, x);
  EMBER_CHECK_VALUE(n >= 0, "[polygamma] polygamma(n, x) does not support negative n.");
  Tensor out = detail::unary(UnaryOp::Polygamma, x, {static_cast<double>(n)});
  if (any_requires_grad({&x}))
    record("PolygammaBackward0", {&out}, {&x}, [n, sx = SavedTensor(x)](const Tensor& g) {
      return TensorList{g * polygamma(n + 1, sx.get())};
    });
  return out;
}

namespace {
// igamma/igammac: differentiable in x only (PyTorch has no derivative in a either).
Tensor incomplete_gamma(BinaryOp op, const char* node, const Tensor& a, const Tensor& x) {
  Tensor out = detail::binary(op, a, x);
  if (any_requires_grad({&a, &x})) {
    bool upper = op == BinaryOp::Igammac;
    record(node, {&out}, {&a, &x},
           [upper, node, sa = SavedTensor(a), sx = SavedTensor(x)](const Tensor& g,
                                                                 const Node& n) {
             EMBER_CHECK(!n.needs_input_grad(0), "[", node,
                         "] the derivative with respect to the first argument (a) is not "
                         "implemented, as in PyTorch");
             const Tensor &a = sa.get(), &x = sx.get();
             Tensor d = exp((a - 1) * log(x) - x - lgamma(a));
             return TensorList{Tensor(), sum_to(upper ? -g * d : g * d, x.sizes())};
           });
  }
  return out;
}
}  // namespace

Tensor igamma(const Tensor& a, const Tensor& x) {
  EMBER_OP(igamma, a, x);
  return incomplete_gamma(BinaryOp::Igamma, "IgammaBackward0", a, x);
}

Tensor igammac(const Tensor& a, const Tensor& x) {
  EMBER_OP(igammac, a, x);
  return incomplete_gamma(BinaryOp::Igammac, "IgammacBackward0", a, x);
}

namespace {
// The bfloat16 after a towards b, in float32 (where bfloat16 values and their neighbours are
// exact): a step of 2^(e - 8) for |a| in [2^(e-1), 2^e) (8 significant bits), half that when
// stepping towards zero from a power of two, 2^-133 among the subnormals.
Tensor nextafter_bfloat16(const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  Tensor x = a.to(kFloat32), y = b.to(kFloat32);
  auto [mantissa, exponent] = frexp(x);
  Tensor e = exponent.to(kFloat32);
  Tensor toward_zero = lt((y - x) * x, 0);
  Tensor halved = logical_and(toward_zero, eq(abs(mantissa), 0.5));
  Tensor step = exp2(clamp(where(halved, e - 9.0, e - 8.0), Scalar(-133.0), std::nullopt));
  Tensor tiny = scalar_tensor(std::ldexp(1.0, -133), x.options());
  Tensor r = where(gt(y, x), x + step, x - step);
  r = where(eq(x, 0), where(gt(y, 0), tiny, -tiny), r);
  r = where(logical_and(isinf(x), ne(x, y)), sign(x) * 3.3895313892515355e38, r);
  r = where(eq(x, y), y, r);
  r = where(logical_or(isnan(x), isnan(y)), x + y, r);
  return r.to(kBFloat16);
}
}  // namespace

Tensor nextafter(const Tensor& a, const Tensor& b) {
  EMBER_OP(nextafter, a, b);
  DType t = promote_types(a.dtype(), b.dtype());
  if (t == kBFloat16) return nextafter_bfloat16(a, b);
  EMBER_CHECK(t == kFloat32 || t == kFloat64, "[nextafter] \"nextafter_cpu\" not implemented for '",
              t, "' (ember has it for bfloat16, float32 and float64)");
  return detail::binary(BinaryOp::Nextafter, a, b);
}

std::tuple<Tensor, Tensor> frexp(const Tensor& x) {
  EMBER_OP(frexp, x);
  EMBER_CHECK(x.is_floating_point(),
              "[frexp] torch.frexp() only supports floating-point dtypes, got ", x.dtype());
  Tensor m, e;
  {
    NoGradGuard no_grad;
    // In float64, where every input is exact: the exponent from log2, then one step of
    // correction where log2 rounded across a power of two.
    Tensor x64 = x.to(kFloat64), ax = abs(x64);
    Tensor ok = logical_and(gt(ax, 0), isfinite(x64));
    Tensor e64 = where(ok, floor(log2(where(ok, ax, scalar_tensor(1.0, ax.options())))) + 1.0,
                       scalar_tensor(0.0, ax.options()));
    Tensor m64 = x64 / exp2(e64);
    Tensor big = ge(abs(m64), 1.0), small = logical_and(lt(abs(m64), 0.5), ok);
    e64 = e64 + where(big, scalar_tensor(1.0, ax.options()), scalar_tensor(0.0, ax.options())) -
          where(small, scalar_tensor(1.0, ax.options()), scalar_tensor(0.0, ax.options()));
    m64 = where(ok, x64 / exp2(e64), x64);
    m = m64.to(x.dtype());
    e = e64.to(kInt32);
  }
  if (any_requires_grad({&x}))
    record("FrexpBackward0", {&m}, {&x}, [e](const Tensor& g) {
      return TensorList{g / exp2(e.to(g.dtype()))};
    });
  return {m, e};
}

namespace special {

EMBER_UNARY_WITH_GRAD(i0e, I0e, "SpecialI0eBackward0", true,
                      g*(special::i1e(x) - sign(x) * special::i0e(x)))
EMBER_UNARY_WITH_GRAD(i1, I1, "SpecialI1Backward0", true,
                      g* at_zero(x, i0(x) - special::i1(x) / x, 0.5))
EMBER_UNARY_WITH_GRAD(i1e, I1e, "SpecialI1EBackward0", true,
                      g* at_zero(x, special::i0e(x) - special::i1e(x) * (sign(x) + 1.0 / x), 0.5))
EMBER_UNARY_WITH_GRAD(ndtr, Ndtr, "SpecialNdtrBackward0", true,
                      g* exp(x * x * -0.5) / kSqrtTwoPi)
EMBER_UNARY_WITH_GRAD(ndtri, Ndtri, "SpecialNdtriBackward0", false,
                      g* exp(out * out * 0.5) * kSqrtTwoPi)
EMBER_UNARY_WITH_GRAD(log_ndtr, LogNdtr, "SpecialLogNdtrBackward0", true,
                      g* exp(x * x * -0.5 - special::log_ndtr(x)) / kSqrtTwoPi)
EMBER_UNARY_WITH_GRAD(erfcx, Erfcx, "SpecialErfcxBackward0", true,
                      g*(x * special::erfcx(x) * 2.0 - kTwoOverSqrtPi))
EMBER_UNARY_WITH_GRAD(entr, Entr, "SpecialEntrBackward0", true, g * -(log(x) + 1.0))

// No derivatives, as in PyTorch 1.13: the Bessel functions, Airy's and the polynomials.
#define EMBER_SPECIAL_NO_GRAD(fname, Op)          \
  Tensor fname(const Tensor& x) {                 \
    EMBER_OP(fname, x);                           \
    return detail::unary(UnaryOp::Op, x);         \
  }
EMBER_SPECIAL_NO_GRAD(bessel_j0, BesselJ0)
EMBER_SPECIAL_NO_GRAD(bessel_j1, BesselJ1)
EMBER_SPECIAL_NO_GRAD(bessel_y0, BesselY0)
EMBER_SPECIAL_NO_GRAD(bessel_y1, BesselY1)
EMBER_SPECIAL_NO_GRAD(modified_bessel_i0, I0)
EMBER_SPECIAL_NO_GRAD(modified_bessel_i1, I1)
EMBER_SPECIAL_NO_GRAD(modified_bessel_k0, ModifiedBesselK0)
EMBER_SPECIAL_NO_GRAD(modified_bessel_k1, ModifiedBesselK1)
EMBER_SPECIAL_NO_GRAD(scaled_modified_bessel_k0, ScaledModifiedBesselK0)
EMBER_SPECIAL_NO_GRAD(scaled_modified_bessel_k1, ScaledModifiedBesselK1)
EMBER_SPECIAL_NO_GRAD(spherical_bessel_j0, SphericalBesselJ0)
EMBER_SPECIAL_NO_GRAD(airy_ai, AiryAi)
#undef EMBER_SPECIAL_NO_GRAD

#define EMBER_POLYNOMIAL(fname, Op)                               \
  Tensor fname(const Tensor& x, const Tensor& n) {                \
    EMBER_OP(fname, x, n);                                        \
    return detail::binary(BinaryOp::Op, x, n);                    \
  }
EMBER_POLYNOMIAL(chebyshev_polynomial_t, ChebyshevPolynomialT)
EMBER_POLYNOMIAL(chebyshev_polynomial_u, ChebyshevPolynomialU)
EMBER_POLYNOMIAL(chebyshev_polynomial_v, ChebyshevPolynomialV)
EMBER_POLYNOMIAL(chebyshev_polynomial_w, ChebyshevPolynomialW)
EMBER_POLYNOMIAL(shifted_chebyshev_polynomial_t, ShiftedChebyshevPolynomialT)
EMBER_POLYNOMIAL(shifted_chebyshev_polynomial_u, ShiftedChebyshevPolynomialU)
EMBER_POLYNOMIAL(shifted_chebyshev_polynomial_v, ShiftedChebyshevPolynomialV)
EMBER_POLYNOMIAL(shifted_chebyshev_polynomial_w, ShiftedChebyshevPolynomialW)
EMBER_POLYNOMIAL(hermite_polynomial_h, HermitePolynomialH)
EMBER_POLYNOMIAL(hermite_polynomial_he, HermitePolynomialHe)
EMBER_POLYNOMIAL(laguerre_polynomial_l, LaguerrePolynomialL)
EMBER_POLYNOMIAL(legendre_polynomial_p, LegendrePolynomialP)
#undef EMBER_POLYNOMIAL

Tensor xlog1py(const Tensor& x, const Tensor& y) {
  EMBER_OP(xlog1py, x, y);
  Tensor out = detail::binary(BinaryOp::Xlog1py, x, y);
  if (any_requires_grad({&x, &y}))
    record("SpecialXlog1pyBackward0", {&out}, {&x, &y},
           [sx = SavedTensor(x), sy = SavedTensor(y)](const Tensor& g, const Node& n) {
             const Tensor &x = sx.get(), &y = sy.get();
             Tensor gx, gy;
             if (n.needs_input_grad(0))
               gx = sum_to(where(logical_and(eq(x, 0), le(y, -1)), scalar_tensor(0, g.options()),
                                 special::xlog1py(g, y)),
                           x.sizes());
             if (n.needs_input_grad(1)) gy = sum_to(g * x / (y + 1.0), y.sizes());
             return TensorList{gx, gy};
           });
  return out;
}

Tensor zeta(const Tensor& x, const Tensor& q) {
  EMBER_OP(zeta, x, q);
  Tensor out = detail::binary(BinaryOp::Zeta, x, q);
  if (any_requires_grad({&x, &q}))
    record("SpecialZetaBackward0", {&out}, {&x, &q},
           [sx = SavedTensor(x), sq = SavedTensor(q)](const Tensor& g, const Node& n) {
             EMBER_CHECK(!n.needs_input_grad(0),
                         "[zeta] the derivative with respect to x is not implemented, as in "
                         "PyTorch");
             const Tensor &x = sx.get(), &q = sq.get();
             return TensorList{Tensor(), sum_to(-g * x * special::zeta(x + 1.0, q), q.sizes())};
           });
  return out;
}

}  // namespace special
}  // namespace ember
