// Binary elementwise math (and the backward formulas that are elementwise), written once for the
// CPU loop and the CUDA kernel. Same scheme as unary.h: functor, table line, backward in ops/.
#pragma once

#include <type_traits>
#include <utility>
#include "ember/backend/functors/math.h"

#include "ember/backend/functors/unary.h"
#include "ember/core/dtype.h"

namespace ember {


#define EMBER_BINARY_FUNCTOR(Name, R, expr)                         \
  template <typename T>                                             \
  struct Name {                                                     \
    explicit EMBER_HOST_DEVICE Name(const BinaryParams&) {}         \
    EMBER_HOST_DEVICE R operator()(T a, T b) const { return expr; } \
  };

template <typename T>
struct AddFn {
  T alpha;
  explicit EMBER_HOST_DEVICE AddFn(const BinaryParams& p) : alpha(static_cast<T>(p.alpha)) {}
  EMBER_HOST_DEVICE T operator()(T a, T b) const { return a + alpha * b; }
};
template <typename T>
struct SubFn {
  T alpha;
  explicit EMBER_HOST_DEVICE SubFn(const BinaryParams& p) : alpha(static_cast<T>(p.alpha)) {}
  EMBER_HOST_DEVICE T operator()(T a, T b) const { return a - alpha * b; }
};
EMBER_BINARY_FUNCTOR(MulFn, T, a* b)
EMBER_BINARY_FUNCTOR(DivFn, T, a / b)
EMBER_BINARY_FUNCTOR(PowFn, T, math::pow(a, b))
EMBER_BINARY_FUNCTOR(MaximumFn, T, math::max(a, b))
EMBER_BINARY_FUNCTOR(MinimumFn, T, math::min(a, b))
EMBER_BINARY_FUNCTOR(EqFn, bool, a == b)
EMBER_BINARY_FUNCTOR(NeFn, bool, a != b)
EMBER_BINARY_FUNCTOR(LtFn, bool, a < b)
EMBER_BINARY_FUNCTOR(LeFn, bool, a <= b)
EMBER_BINARY_FUNCTOR(GtFn, bool, a > b)
EMBER_BINARY_FUNCTOR(GeFn, bool, a >= b)
EMBER_BINARY_FUNCTOR(LogicalAndFn, bool, a&& b)
EMBER_BINARY_FUNCTOR(LogicalOrFn, bool, a || b)
EMBER_BINARY_FUNCTOR(LogicalXorFn, bool, bool(a) != bool(b))
EMBER_BINARY_FUNCTOR(RemainderFn, T, math::remainder(a, b))
EMBER_BINARY_FUNCTOR(FmodFn, T, math::fmod_any(a, b))
EMBER_BINARY_FUNCTOR(FloorDivideFn, T, math::floor_divide(a, b))
EMBER_BINARY_FUNCTOR(Atan2Fn, T, math::atan2(a, b))
EMBER_BINARY_FUNCTOR(HypotFn, T, math::hypot(a, b))
// Backward formulas: a is the incoming gradient, b what the forward saved.
// b = input; a NaN input passes the gradient, as PyTorch's threshold_backward (b <= 0 is false).
EMBER_BINARY_FUNCTOR(ReluBackwardFn, T, b <= T(0) ? T(0) : a)
EMBER_BINARY_FUNCTOR(SigmoidBackwardFn, T, a* b*(T(1) - b))  // b = output
EMBER_BINARY_FUNCTOR(TanhBackwardFn, T, a*(T(1) - b * b))    // b = output
// b = input: d/dx of x Phi(x) is Phi(x) + x phi(x).
EMBER_BINARY_FUNCTOR(GeluBackwardFn, T,
                     a*(T(0.5) * (T(1) + math::erf_approx(b * T(0.70710678118654752))) +
                        b * T(0.39894228040143268) * math::exp(T(-0.5) * b * b)))
EMBER_BINARY_FUNCTOR(SiluBackwardFn, T,
                     a*(T(1) / (T(1) + math::exp(-b))) * (T(1) + b * (T(1) - T(1) / (T(1) + math::exp(-b)))))
// Bitwise ops (integers and bool). Shifts as PyTorch's: a left shift by the bit width or more is 0,
// a right shift by as much keeps only the sign.
EMBER_BINARY_FUNCTOR(BitwiseAndFn, T, static_cast<T>(a & b))
EMBER_BINARY_FUNCTOR(BitwiseOrFn, T, static_cast<T>(a | b))
EMBER_BINARY_FUNCTOR(BitwiseXorFn, T, static_cast<T>(a ^ b))
EMBER_BINARY_FUNCTOR(LeftShiftFn, T, math::left_shift(a, b))
EMBER_BINARY_FUNCTOR(RightShiftFn, T, math::right_shift(a, b))
#undef EMBER_BINARY_FUNCTOR

/// (Name, functor, kind). Compare ops produce bool.
#define EMBER_BINARY_OPS(_)                       \
  _(Add, AddFn, Numeric)                          \
  _(Sub, SubFn, Numeric)                          \
  _(Mul, MulFn, Numeric)                          \
  _(Div, DivFn, Floating)                         \
  _(Pow, PowFn, Numeric)                          \
  _(Maximum, MaximumFn, Numeric)                  \
  _(Minimum, MinimumFn, Numeric)                  \
  _(Eq, EqFn, Compare)                            \
  _(Ne, NeFn, Compare)                            \
  _(Lt, LtFn, Compare)                            \
  _(Le, LeFn, Compare)                            \
  _(Gt, GtFn, Compare)                            \
  _(Ge, GeFn, Compare)                            \
  _(LogicalAnd, LogicalAndFn, Bool)               \
  _(LogicalOr, LogicalOrFn, Bool)                 \
  _(LogicalXor, LogicalXorFn, Bool)               \
  _(Remainder, RemainderFn, Numeric)              \
  _(Fmod, FmodFn, Numeric)                        \
  _(FloorDivide, FloorDivideFn, Numeric)          \
  _(Atan2, Atan2Fn, Floating)                     \
  _(Hypot, HypotFn, Floating)                     \
  _(ReluBackward, ReluBackwardFn, Floating)       \
  _(SigmoidBackward, SigmoidBackwardFn, Floating) \
  _(TanhBackward, TanhBackwardFn, Floating)       \
  _(GeluBackward, GeluBackwardFn, Floating)       \
  _(SiluBackward, SiluBackwardFn, Floating)       \
  _(BitwiseAnd, BitwiseAndFn, Integral)           \
  _(BitwiseOr, BitwiseOrFn, Integral)             \
  _(BitwiseXor, BitwiseXorFn, Integral)           \
  _(BitwiseLeftShift, LeftShiftFn, Integral)      \
  _(BitwiseRightShift, RightShiftFn, Integral)    \
  EMBER_SPECIAL_BINARY_OPS(_)

enum class BinaryOp {
#define EMBER_ENUM_ENTRY(name, fn, kind) name,
  EMBER_BINARY_OPS(EMBER_ENUM_ENTRY)
#undef EMBER_ENUM_ENTRY
};

/// The ops whose functors also run on complex64 and complex128.
constexpr bool binary_takes_complex(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      return true;
    default:
      return false;
  }
}

const char* binary_op_name(BinaryOp op);
OpKind binary_op_kind(BinaryOp op);

/// The element type a binary functor writes for inputs of type T: bool for comparisons, else T.
template <typename F, typename T>
using binary_result_t =
    std::conditional_t<std::is_same_v<decltype(std::declval<F>()(std::declval<opmath_t<T>>(),
                                                                 std::declval<opmath_t<T>>())),
                                      bool>,
                       bool, T>;

/// A binary functor with its right operand fixed: `x + 2` runs as a unary loop.
template <typename F, typename T>
struct BindRight {
  F f;
  T b;
  EMBER_HOST_DEVICE auto operator()(T a) const { return f(a, b); }
};

// Ternary ops: where(cond, a, b) and the fused updates optimizers use.
struct TernaryParams {
  double value = 1;
};
template <typename T>
struct AddcmulFn {  // self + value * t1 * t2
  T v;
  explicit EMBER_HOST_DEVICE AddcmulFn(const TernaryParams& p) : v(static_cast<T>(p.value)) {}
  EMBER_HOST_DEVICE T operator()(T s, T a, T b) const { return s + v * a * b; }
};
template <typename T>
struct AddcdivFn {  // self + value * t1 / t2
  T v;
  explicit EMBER_HOST_DEVICE AddcdivFn(const TernaryParams& p) : v(static_cast<T>(p.value)) {}
  EMBER_HOST_DEVICE T operator()(T s, T a, T b) const { return s + v * a / b; }
};
template <typename T>
struct LerpFn {  // self + weight * (end - self), weight a tensor
  explicit EMBER_HOST_DEVICE LerpFn(const TernaryParams&) {}
  // From the nearer end, as PyTorch's: exact at weight 1, and no cancellation near it (for a
  // complex weight, nearness is |w| < 0.5).
  EMBER_HOST_DEVICE T operator()(T s, T e, T w) const {
    bool near_start;
    if constexpr (is_complex_v<T>)
      near_start = std::abs(w.std()) < real_of_t<T>(0.5);
    else
      near_start = w < T(0.5) && w > T(-0.5);
    return near_start ? s + w * (e - s) : e - (e - s) * (T(1) - w);
  }
};

/// cond ? a : b.
template <typename T>
struct WhereFn {
  EMBER_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; }
};

#define EMBER_TERNARY_OPS(_)      \
  _(Addcmul, AddcmulFn, Numeric)  \
  _(Addcdiv, AddcdivFn, Floating) \
  _(Lerp, LerpFn, Floating)

enum class TernaryOp {
#define EMBER_ENUM_ENTRY(name, fn, kind) name,
  EMBER_TERNARY_OPS(EMBER_ENUM_ENTRY)
#undef EMBER_ENUM_ENTRY
};

constexpr bool ternary_takes_complex(TernaryOp op) {
  return op == TernaryOp::Addcmul || op == TernaryOp::Addcdiv || op == TernaryOp::Lerp;
}

const char* ternary_op_name(TernaryOp op);

}  // namespace ember
