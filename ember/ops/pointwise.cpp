#include "ember/ops/pointwise.h"

#include <cmath>
#include <limits>

#include "ember/ops/autocast.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/unary_with_grad.h"

namespace ember {
namespace {

constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kLn2 = 0.6931471805599453, kLn10 = 2.302585092994046;

}  // namespace

EMBER_UNARY_WITH_GRAD(erf, Erf, "ErfBackward0", true, g* exp(-x * x) * kTwoOverSqrtPi)
EMBER_UNARY_WITH_GRAD(erfc, Erfc, "ErfcBackward0", true, -g* exp(-x * x) * kTwoOverSqrtPi)
EMBER_UNARY_WITH_GRAD(log2, Log2, "Log2Backward0", true, g / (x * kLn2))
EMBER_UNARY_WITH_GRAD(log10, Log10, "Log10Backward0", true, g / (x * kLn10))
EMBER_UNARY_WITH_GRAD(exp2, Exp2, "Exp2Backward0", false, g* out* kLn2)
EMBER_UNARY_WITH_GRAD(tan, Tan, "TanBackward0", false, g*(out * out + 1.0))
EMBER_UNARY_WITH_GRAD(sinh, Sinh, "SinhBackward0", true, g* cosh(x))
EMBER_UNARY_WITH_GRAD(cosh, Cosh, "CoshBackward0", true, g* sinh(x))
EMBER_UNARY_WITH_GRAD(asin, Asin, "AsinBackward0", true, g* rsqrt(1.0 - x * x))
EMBER_UNARY_WITH_GRAD(acos, Acos, "AcosBackward0", true, -g* rsqrt(1.0 - x * x))
EMBER_UNARY_WITH_GRAD(atan, Atan, "AtanBackward0", true, g / (x * x + 1.0))
EMBER_UNARY_WITH_GRAD(asinh, Asinh, "AsinhBackward0", true, g* rsqrt(x * x + 1.0))
EMBER_UNARY_WITH_GRAD(acosh, Acosh, "AcoshBackward0", true, g* rsqrt(x * x - 1.0))
EMBER_UNARY_WITH_GRAD(atanh, Atanh, "AtanhBackward0", true, g / (1.0 - x * x))
EMBER_UNARY_WITH_GRAD(trunc, Trunc, "TruncBackward0", true, zeros_like(g))
EMBER_UNARY_INPLACE(erf, Erf)
EMBER_UNARY_INPLACE(erfc, Erfc)
EMBER_UNARY_INPLACE(log2, Log2)
EMBER_UNARY_INPLACE(log10, Log10)
EMBER_UNARY_INPLACE(exp2, Exp2)
EMBER_UNARY_INPLACE(tan, Tan)
EMBER_UNARY_INPLACE(sinh, Sinh)
EMBER_UNARY_INPLACE(cosh, Cosh)
EMBER_UNARY_INPLACE(asin, Asin)
EMBER_UNARY_INPLACE(acos, Acos)
EMBER_UNARY_INPLACE(atan, Atan)
EMBER_UNARY_INPLACE(asinh, Asinh)
EMBER_UNARY_INPLACE(acosh, Acosh)
EMBER_UNARY_INPLACE(atanh, Atanh)
EMBER_UNARY_INPLACE(trunc, Trunc)

Tensor frac(const Tensor& x) {
  EMBER_OP(frac, x);
  return x - trunc(x);
}

namespace {
// a (op) b with the gradients of remainder/fmod: d/da = 1, d/db = -(a // b) or -trunc(a / b).
Tensor modulo(BinaryOp op, const char* node, const Tensor& a, const Tensor& b) {
  Tensor out = detail::binary(op, a, b);
  if (any_requires_grad({&a, &b})) {
    record(node, {&out}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b), op](const Tensor& g, const Node& n) {
             Tensor ga, gb;
             if (n.needs_input_grad(0)) ga = sum_to(g, sa.get().sizes());
             if (n.needs_input_grad(1)) {
               Tensor q = op == BinaryOp::Remainder ? floor_divide(sa.get(), sb.get())
                                                    : trunc(sa.get() / sb.get());
               gb = sum_to(-g * q, sb.get().sizes());
             }
             return TensorList{ga, gb};
           });
  }
  return out;
}
void check_integer_divisor(const char* op, const Tensor& a, Scalar b) {
  EMBER_CHECK(a.is_floating_point() || b.is_floating_point() || b.to_int() != 0, "[", op,
              "] ZeroDivisionError");
}
}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b) {
  EMBER_OP(remainder, a, b);
  return modulo(BinaryOp::Remainder, "RemainderBackward0", a, b);
}
Tensor remainder(const Tensor& a, Scalar b) {
  EMBER_OP(remainder, a, b);
  check_integer_divisor("remainder", a, b);
  Tensor out = detail::binary_scalar(BinaryOp::Remainder, a, b);
  if (any_requires_grad({&a}))
    record("RemainderBackward1", {&out}, {&a}, [](const Tensor& g) { return TensorList{g}; });
  return out;
}
Tensor fmod(const Tensor& a, const Tensor& b) {
  EMBER_OP(fmod, a, b);
  return modulo(BinaryOp::Fmod, "FmodBackward1", a, b);
}
Tensor fmod(const Tensor& a, Scalar b) {
  EMBER_OP(fmod, a, b);
  check_integer_divisor("fmod", a, b);
  Tensor out = detail::binary_scalar(BinaryOp::Fmod, a, b);
  if (any_requires_grad({&a}))
    record("FmodBackward0", {&out}, {&a}, [](const Tensor& g) { return TensorList{g}; });
  return out;
}
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  EMBER_OP(floor_divide, a, b);
  return detail::binary(BinaryOp::FloorDivide, a, b);
}
Tensor floor_divide(const Tensor& a, Scalar b) {
  EMBER_OP(floor_divide, a, b);
  check_integer_divisor("floor_divide", a, b);
  return detail::binary_scalar(BinaryOp::FloorDivide, a, b);
}
// The in-place forms: the kernel into a (detail::binary_inplace_op), a number divisor checked as
// the functional form checks it.
#define EMBER_MODULO_INPLACE(fname, Op)                                                        \
  Tensor& fname##_(Tensor& a, const Tensor& b) {                                               \
    EMBER_OP(fname##_, a, b);                                                                  \
    return detail::binary_inplace_op(                                                          \
        BinaryOp::Op, a, b, [](const Tensor& x, const Tensor& y) { return fname(x, y); },      \
        #fname "_");                                                                           \
  }                                                                                            \
  Tensor& fname##_(Tensor& a, Scalar b) {                                                      \
    EMBER_OP(fname##_, a, b);                                                                  \
    check_integer_divisor(#fname, a, b);                                                       \
    return detail::binary_scalar_inplace_op(                                                   \
        BinaryOp::Op, a, b, [](const Tensor& x, Scalar y) { return fname(x, y); }, #fname "_"); \
  }
EMBER_MODULO_INPLACE(remainder, Remainder)
EMBER_MODULO_INPLACE(fmod, Fmod)
EMBER_MODULO_INPLACE(floor_divide, FloorDivide)
#undef EMBER_MODULO_INPLACE

Tensor div(const Tensor& a, const Tensor& b, const std::string& mode) {
  EMBER_OP(div, a, b, mode);
  EMBER_CHECK_VALUE(mode == "trunc" || mode == "floor",
                    "[div] expected rounding_mode 'trunc', 'floor' or None, got '", mode, "'");
  Tensor out;
  {
    NoGradGuard no_grad;
    if (mode == "floor") {
      out = floor_divide(a, b);
    } else if (!a.is_floating_point() && !b.is_floating_point()) {
      // Integer division truncates: the floor quotient, one higher where it was rounded down.
      Tensor q = floor_divide(a, b);
      out = where(logical_and(ne(remainder(a, b), 0), lt(mul(a, b), 0)), q + 1, q);
    } else {
      out = trunc(div(a, b));
    }
  }
  // A rounded quotient is a step function: autograd follows it with zero gradients (PyTorch's
  // div_tensor_self_backward), where floor_divide itself is not differentiable.
  if (any_requires_grad({&a, &b}))
    record("DivBackward2", {&out}, {&a, &b}, [sa = a.sizes(), sb = b.sizes()](const Tensor& g) {
      return TensorList{zeros(sa, g.options()), zeros(sb, g.options())};
    });
  return out;
}
Tensor atan2(const Tensor& a, const Tensor& b) {
  EMBER_OP(atan2, a, b);
  Tensor out = detail::binary(BinaryOp::Atan2, a, b);
  if (any_requires_grad({&a, &b})) {
    record("Atan2Backward0", {&out}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) {
             const Tensor &y = sa.get(), &x = sb.get();
             Tensor denom = x * x + y * y;
             Tensor ga, gb;
             if (n.needs_input_grad(0)) ga = sum_to(g * x / denom, y.sizes());
             if (n.needs_input_grad(1)) gb = sum_to(-g * y / denom, x.sizes());
             return TensorList{ga, gb};
           });
  }
  return out;
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  EMBER_OP(logical_xor, a, b);
  return detail::binary(BinaryOp::LogicalXor, a.to(kBool), b.to(kBool));
}

namespace {
void check_bitwise(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(!a.is_floating_point() && !b.is_floating_point(), "[", op, "] \"", op,
              "_cpu\" not implemented for '", a.is_floating_point() ? a.dtype() : b.dtype(), "'");
}
}  // namespace

#define EMBER_BITWISE(fname, Op)                                                          \
  Tensor fname(const Tensor& a, const Tensor& b) {                                        \
    EMBER_OP(fname, a, b);                                                                \
    check_bitwise(#fname, a, b);                                                          \
    return detail::binary(BinaryOp::Op, a, b);                                            \
  }                                                                                       \
  Tensor& fname##_(Tensor& a, const Tensor& b) {                                          \
    EMBER_OP(fname##_, a, b);                                                             \
    check_bitwise(#fname, a, b);                                                          \
    return detail::binary_inplace_op(                                                     \
        BinaryOp::Op, a, b, [](const Tensor& x, const Tensor& y) { return fname(x, y); }, \
        #fname "_");                                                                      \
  }
EMBER_BITWISE(bitwise_and, BitwiseAnd)
EMBER_BITWISE(bitwise_or, BitwiseOr)
EMBER_BITWISE(bitwise_xor, BitwiseXor)
EMBER_BITWISE(bitwise_left_shift, BitwiseLeftShift)
EMBER_BITWISE(bitwise_right_shift, BitwiseRightShift)
#undef EMBER_BITWISE

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  EMBER_OP(logaddexp, a, b);
  Tensor m = maximum(a, b);
  // Where both are the same infinity the difference is NaN: the sum is that infinity.
  Tensor r = m + log1p(exp(-abs(a - b)));
  return where(isinf(m), m, r);
}

Tensor fmax(const Tensor& a, const Tensor& b) {
  EMBER_OP(fmax, a, b);
  return where(isnan(a), b, where(isnan(b), a, maximum(a, b)));
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  EMBER_OP(fmin, a, b);
  return where(isnan(a), b, where(isnan(b), a, minimum(a, b)));
}

Tensor deg2rad(const Tensor& x) {
  EMBER_OP(deg2rad, x);
  return x * (3.141592653589793 / 180.0);
}

Tensor rad2deg(const Tensor& x) {
  EMBER_OP(rad2deg, x);
  return x * (180.0 / 3.141592653589793);
}

Tensor bitwise_not(const Tensor& x) {
  EMBER_OP(bitwise_not, x);
  EMBER_CHECK(!x.is_floating_point(), "[bitwise_not] \"bitwise_not_cpu\" not implemented for '",
              x.dtype(), "'");
  if (x.dtype() == kBool) return logical_not(x);
  // ~x = -x - 1 in two's complement; uint8's is 255 - x (the same bits).
  return detail::binary_scalar(BinaryOp::BitwiseXor, x, Scalar(int64_t{-1}));
}

Tensor isnan(const Tensor& x) {
  EMBER_OP(isnan, x);
  NoGradGuard no_grad;
  return x.is_floating_point() || x.is_complex() ? ne(x, x) : zeros_like(x, kBool);
}
Tensor isinf(const Tensor& x) {
  EMBER_OP(isinf, x);
  NoGradGuard no_grad;
  if (!x.is_floating_point() && !x.is_complex()) return zeros_like(x, kBool);
  return eq(abs(x), std::numeric_limits<double>::infinity());
}
Tensor isposinf(const Tensor& x) {
  EMBER_OP(isposinf, x);
  NoGradGuard no_grad;
  if (!x.is_floating_point()) return zeros_like(x, kBool);
  return eq(x, std::numeric_limits<double>::infinity());
}
Tensor isneginf(const Tensor& x) {
  EMBER_OP(isneginf, x);
  NoGradGuard no_grad;
  if (!x.is_floating_point()) return zeros_like(x, kBool);
  return eq(x, -std::numeric_limits<double>::infinity());
}

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  EMBER_OP(nan_to_num, x, nan, posinf, neginf);
  if (!x.is_floating_point()) return x.clone();
  double big = x.dtype() == kFloat64   ? std::numeric_limits<double>::max()
               : x.dtype() == kFloat32 ? std::numeric_limits<float>::max()
               : x.dtype() == kFloat16 ? 65504.0
                                       : 3.3895313892515355e38;  // bfloat16
  Tensor out = where(isnan(x), scalar_tensor(nan.value_or(0.0), x.options()), x);
  out = where(isposinf(x), scalar_tensor(posinf.value_or(big), x.options()), out);
  return where(isneginf(x), scalar_tensor(neginf.value_or(-big), x.options()), out);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_OP(isclose, a, b, rtol, atol, equal_nan);
  NoGradGuard no_grad;
  EMBER_CHECK(a.dtype() == b.dtype(), "[isclose] expected both inputs to have the same dtype, got ",
              a.dtype(), " and ", b.dtype());
  if (!a.is_floating_point() && !a.is_complex()) return eq(a, b);
  Tensor close = logical_or(eq(a, b), le(abs(a - b), abs(b) * rtol + atol));
  if (equal_nan) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  return close;
}

}  // namespace ember
