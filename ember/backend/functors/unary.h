// Unary elementwise math, written once for the CPU loop and the CUDA kernel. Each functor is a
// template over the compute type (opmath_t: float for the 16-bit floats) and is built from the
// op's parameters. To add an op: a functor here, a line in EMBER_UNARY_OPS, a backward in ops/.
#pragma once

#include "ember/backend/functors/math.h"
#include "ember/backend/functors/params.h"
#include "ember/backend/functors/special.h"

namespace ember {


#define EMBER_UNARY_FUNCTOR(Name, expr)                        \
  template <typename T>                                        \
  struct Name {                                                \
    explicit EMBER_HOST_DEVICE Name(const UnaryParams&) {}     \
    EMBER_HOST_DEVICE T operator()(T x) const { return expr; } \
  };

EMBER_UNARY_FUNCTOR(NegFn, -x)
EMBER_UNARY_FUNCTOR(AbsFn, math::abs(x))
EMBER_UNARY_FUNCTOR(ExpFn, math::exp(x))
EMBER_UNARY_FUNCTOR(LogFn, math::log(x))
EMBER_UNARY_FUNCTOR(SqrtFn, math::sqrt(x))
EMBER_UNARY_FUNCTOR(RsqrtFn, math::rsqrt(x))
EMBER_UNARY_FUNCTOR(TanhFn, math::tanh(x))
EMBER_UNARY_FUNCTOR(SigmoidFn, T(1) / (T(1) + math::exp(-x)))
EMBER_UNARY_FUNCTOR(ReluFn, x > T(0) ? x : (math::isnan(x) ? x : T(0)))
EMBER_UNARY_FUNCTOR(SinFn, math::sin(x))
EMBER_UNARY_FUNCTOR(CosFn, math::cos(x))
EMBER_UNARY_FUNCTOR(SquareFn, x* x)
EMBER_UNARY_FUNCTOR(ReciprocalFn, T(1) / x)
EMBER_UNARY_FUNCTOR(SignFn, T((T(0) < x) - (x < T(0))))
EMBER_UNARY_FUNCTOR(FloorFn, math::floor(x))
EMBER_UNARY_FUNCTOR(CeilFn, math::ceil(x))
EMBER_UNARY_FUNCTOR(RoundFn, math::round(x))
EMBER_UNARY_FUNCTOR(Log1pFn, math::log1p(x))
EMBER_UNARY_FUNCTOR(Expm1Fn, math::expm1(x))
EMBER_UNARY_FUNCTOR(LogicalNotFn, !x)
EMBER_UNARY_FUNCTOR(ErfFn, math::erf(x))
EMBER_UNARY_FUNCTOR(ErfcFn, math::erfc(x))
EMBER_UNARY_FUNCTOR(Log2Fn, math::log2(x))
EMBER_UNARY_FUNCTOR(Log10Fn, math::log10(x))
EMBER_UNARY_FUNCTOR(Exp2Fn, math::exp2(x))
EMBER_UNARY_FUNCTOR(TanFn, math::tan(x))
EMBER_UNARY_FUNCTOR(SinhFn, math::sinh(x))
EMBER_UNARY_FUNCTOR(CoshFn, math::cosh(x))
EMBER_UNARY_FUNCTOR(AsinFn, math::asin(x))
EMBER_UNARY_FUNCTOR(AcosFn, math::acos(x))
EMBER_UNARY_FUNCTOR(AtanFn, math::atan(x))
EMBER_UNARY_FUNCTOR(AsinhFn, math::asinh(x))
EMBER_UNARY_FUNCTOR(AcoshFn, math::acosh(x))
EMBER_UNARY_FUNCTOR(AtanhFn, math::atanh(x))
EMBER_UNARY_FUNCTOR(TruncFn, math::trunc(x))
// Activations: x * Phi(x) (GELU), x * sigmoid(x) (SiLU), x * tanh(softplus(x)) (Mish).
EMBER_UNARY_FUNCTOR(GeluFn, x* T(0.5) * (T(1) + math::erf_approx(x * T(0.70710678118654752))))
EMBER_UNARY_FUNCTOR(GeluTanhFn,
                    T(0.5) * x *
                        (T(1) + math::tanh(T(0.79788456080286536) * (x + T(0.044715) * x * x * x))))
EMBER_UNARY_FUNCTOR(SiluFn, x / (T(1) + math::exp(-x)))
EMBER_UNARY_FUNCTOR(MishFn, x* math::tanh(x > T(20) ? x : math::log1p(math::exp(x))))
EMBER_UNARY_FUNCTOR(HardswishFn, x* math::min(math::max(x + T(3), T(0)), T(6)) / T(6))
EMBER_UNARY_FUNCTOR(HardsigmoidFn, math::min(math::max(x + T(3), T(0)), T(6)) / T(6))
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow for either sign.
EMBER_UNARY_FUNCTOR(LogsigmoidFn, math::min(x, T(0)) - math::log1p(math::exp(-math::abs(x))))
#undef EMBER_UNARY_FUNCTOR

/// softplus(x) = log(1 + exp(beta x)) / beta, linear above threshold (a = beta, b = threshold).
template <typename T>
struct SoftplusFn {
  T beta, threshold;
  explicit EMBER_HOST_DEVICE SoftplusFn(const UnaryParams& p)
      : beta(static_cast<T>(p.a)), threshold(static_cast<T>(p.b)) {}
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x * beta > threshold ? x : math::log1p(math::exp(x * beta)) / beta;
  }
};

/// ELU family: x > 0 ? scale x : scale alpha (exp(x input_scale) - 1) (a = alpha, b = scale;
/// input_scale 1; SELU and CELU are ELU with their constants).
template <typename T>
struct EluFn {
  T alpha, scale;
  explicit EMBER_HOST_DEVICE EluFn(const UnaryParams& p)
      : alpha(static_cast<T>(p.a)), scale(static_cast<T>(p.b)) {}
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? scale * x : scale * alpha * math::expm1(x);
  }
};

/// x > 0 ? x : slope x (a = negative_slope).
template <typename T>
struct LeakyReluFn {
  T slope;
  explicit EMBER_HOST_DEVICE LeakyReluFn(const UnaryParams& p) : slope(static_cast<T>(p.a)) {}
  EMBER_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : x * slope; }
};

/// clamp(x, a, b); a missing bound is passed as -inf / +inf (or the integer limits).
template <typename T>
struct ClampFn {
  T lo, hi;
  explicit EMBER_HOST_DEVICE ClampFn(const UnaryParams& p)
      : lo(static_cast<T>(p.a)), hi(static_cast<T>(p.b)) {}
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (math::isnan(x)) return x;
    T r = x < lo ? lo : x;  // min(max(x, lo), hi): with lo > hi the result is hi, as PyTorch
    return r > hi ? hi : r;
  }
};

/// x ** p for a scalar p, with the common powers done by multiplication.
template <typename T>
struct PowScalarFn {
  T p;
  explicit EMBER_HOST_DEVICE PowScalarFn(const UnaryParams& params) : p(static_cast<T>(params.a)) {}
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (p == T(2)) return x * x;
    if (p == T(1)) return x;
    if (p == T(3)) return x * x * x;
    return math::pow(x, p);
  }
};

/// Conversion to `To` (copies between dtypes); the loop passes the source in its opmath type.
template <typename To>
struct ConvertFn {
  template <typename From>
  EMBER_HOST_DEVICE To operator()(From x) const {
    return static_cast<To>(x);
  }
};

/// A constant (fill_).
template <typename T>
struct FillFn {
  T value;
  EMBER_HOST_DEVICE T operator()() const { return value; }
};

/// (Name, functor, kind): the one table both backends expand.
#define EMBER_UNARY_OPS(_)              \
  _(Neg, NegFn, Numeric)                \
  _(Abs, AbsFn, Numeric)                \
  _(Exp, ExpFn, Floating)               \
  _(Log, LogFn, Floating)               \
  _(Sqrt, SqrtFn, Floating)             \
  _(Rsqrt, RsqrtFn, Floating)           \
  _(Tanh, TanhFn, Floating)             \
  _(Sigmoid, SigmoidFn, Floating)       \
  _(Relu, ReluFn, Numeric)              \
  _(Sin, SinFn, Floating)               \
  _(Cos, CosFn, Floating)               \
  _(Square, SquareFn, Numeric)          \
  _(Reciprocal, ReciprocalFn, Floating) \
  _(Sign, SignFn, Numeric)              \
  _(Floor, FloorFn, Numeric)            \
  _(Ceil, CeilFn, Numeric)              \
  _(Round, RoundFn, Numeric)            \
  _(Log1p, Log1pFn, Floating)           \
  _(Expm1, Expm1Fn, Floating)           \
  _(LogicalNot, LogicalNotFn, Bool)     \
  _(Clamp, ClampFn, Numeric)            \
  _(PowScalar, PowScalarFn, Numeric)    \
  _(Erf, ErfFn, Floating)               \
  _(Erfc, ErfcFn, Floating)             \
  _(Log2, Log2Fn, Floating)             \
  _(Log10, Log10Fn, Floating)           \
  _(Exp2, Exp2Fn, Floating)             \
  _(Tan, TanFn, Floating)               \
  _(Sinh, SinhFn, Floating)             \
  _(Cosh, CoshFn, Floating)             \
  _(Asin, AsinFn, Floating)             \
  _(Acos, AcosFn, Floating)             \
  _(Atan, AtanFn, Floating)             \
  _(Asinh, AsinhFn, Floating)           \
  _(Acosh, AcoshFn, Floating)           \
  _(Atanh, AtanhFn, Floating)           \
  _(Trunc, TruncFn, Numeric)            \
  _(Gelu, GeluFn, Floating)             \
  _(GeluTanh, GeluTanhFn, Floating)     \
  _(Silu, SiluFn, Floating)             \
  _(Mish, MishFn, Floating)             \
  _(Hardswish, HardswishFn, Floating)   \
  _(Hardsigmoid, HardsigmoidFn, Floating) \
  _(Logsigmoid, LogsigmoidFn, Floating) \
  _(Softplus, SoftplusFn, Floating)     \
  _(Elu, EluFn, Floating)               \
  _(LeakyRelu, LeakyReluFn, Floating)   \
  EMBER_SPECIAL_UNARY_OPS(_)

enum class UnaryOp {
#define EMBER_ENUM_ENTRY(name, fn, kind) name,
  EMBER_UNARY_OPS(EMBER_ENUM_ENTRY)
#undef EMBER_ENUM_ENTRY
};

/// The ops whose functors also run on complex64 and complex128 (PyTorch's complex support for
/// them); the others refuse complex inputs by name.
constexpr bool unary_takes_complex(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Square:
    case UnaryOp::Reciprocal:
    case UnaryOp::Log1p:
    case UnaryOp::Expm1:
    case UnaryOp::PowScalar:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Exp2:
    case UnaryOp::Tan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Silu:
      return true;
    default:
      return false;
  }
}

const char* unary_op_name(UnaryOp op);
OpKind unary_op_kind(UnaryOp op);

}  // namespace ember
