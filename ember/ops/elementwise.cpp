// Binary and ternary elementwise ops: promotion, broadcasting, dispatch, backward formulas.
#include "ember/ops/elementwise.h"

#include <cmath>

#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/kernel_capture.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember {
namespace {

DType floating_of(DType t) { return is_floating_point(t) || is_complex(t) ? t : kDefaultFloat; }
Tensor cast(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// The dtype the op's kernel runs in, given the promoted dtype of its operands.
DType compute_dtype(OpKind kind, DType common) {
  switch (kind) {
    case OpKind::Floating:
      return floating_of(common);
    case OpKind::Bool:
      return DType::Bool;
    default:
      return common;
  }
}
DType output_dtype(OpKind kind, DType compute) {
  return kind == OpKind::Compare || kind == OpKind::Bool ? DType::Bool : compute;
}

// PyTorch's sub_check: no bool operand, whatever the other one is.
void check_sub_operands(DType a, DType b) {
  EMBER_CHECK(a != DType::Bool && b != DType::Bool,
              "[sub] subtraction, the `-` operator, with a bool tensor is not supported; "
              "use logical_not() or logical_xor() instead");
}

// PyTorch's bool arithmetic: add and maximum are logical or, mul and minimum logical and.
BinaryOp for_dtype(BinaryOp op, DType compute) {
  if (compute != DType::Bool) return op;
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Maximum:
      return BinaryOp::LogicalOr;
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
      return BinaryOp::LogicalAnd;
    case BinaryOp::Sub:
      check_sub_operands(DType::Bool, DType::Bool);
      return op;
    default:
      return op;
  }
}

// PyTorch's alpha_check for add and sub: the multiplier must fit the result's kind.
void check_alpha(const char* op, DType result, Scalar alpha) {
  EMBER_CHECK(!alpha.is_bool() || result == DType::Bool, "[", op,
              "] boolean alpha only supported for boolean results, got ", result);
  EMBER_CHECK(
      is_floating_point(result) || !alpha.is_floating_point(), "[", op,
      "] for integral input tensors, argument alpha must not be a floating point number, got ",
      alpha.to_double());
}

void check_alpha(const char* op, const Tensor& a, const Tensor& b, Scalar alpha) {
  check_defined(op, a, "self");
  check_defined(op, b, "other");
  check_alpha(op, result_type(a, b), alpha);
}

// b * alpha for add(tensor, scalar, alpha) as one scalar of the result's kind.
Scalar scaled(const char* op, DType result, Scalar b, Scalar alpha) {
  check_alpha(op, result, alpha);
  if (result == DType::Bool) return Scalar(b.to<bool>() && alpha.to<bool>());
  if (b.is_complex() || alpha.is_complex())
    return Scalar(b.to<Complex<double>>() * alpha.to<Complex<double>>());
  if (b.is_floating_point() || alpha.is_floating_point())
    return Scalar(b.to_double() * alpha.to_double());
  return Scalar(b.to_int() * alpha.to_int());
}

// PyTorch's checked_convert: a fill value must fit the tensor's dtype (infinities and NaN fit a
// floating one); bool takes any value.
void check_fits(const char* op, Scalar v, DType t) {
  if (t == DType::Bool || v.is_bool()) return;
  double d = v.to_double();
  double lo = 0, hi = 0;
  switch (t) {
    case DType::UInt8:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
      lo = static_cast<double>(integral_min(t)), hi = static_cast<double>(integral_max(t));
      break;
    case DType::Int64:
      if (!v.is_floating_point()) return;
      lo = -9223372036854775808.0, hi = 9223372036854775807.0;
      break;
    case DType::Float16:
      lo = -65504, hi = 65504;
      break;
    case DType::BFloat16:
    case DType::Float32:
      hi = 3.4028234663852886e38, lo = -hi;
      break;
    default:
      return;
  }
  if (is_floating_point(t) && !std::isfinite(d)) return;
  EMBER_CHECK(d >= lo && d <= hi, "[", op, "] value ", d, " cannot be converted to ", t,
              " without overflow");
}

Scalar negated(Scalar s) {
  if (s.is_complex()) return Scalar(-s.to<Complex<double>>());
  return s.is_floating_point() ? Scalar(-s.to_double()) : Scalar(-s.to_int());
}

}  // namespace

namespace detail {

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const BinaryParams& p) {
  const char* name = binary_op_name(op);
  check_defined(name, a, "self");
  check_defined(name, b, "other");
  check_same_device(name, {&a, &b});
  OpKind kind = binary_op_kind(op);
  DType ct = compute_dtype(kind, result_type(a, b));
  Tensor ac = cast(a, ct), bc = cast(b, ct);
  if (ct == DType::Bool && op == BinaryOp::Add && p.alpha == 0) bc = zeros_like(bc);  // a + 0 * b
  const Shape& shape =
      a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, TensorOptions(output_dtype(kind, ct)).with_device(a.device()));
  TensorIter it(out, {ac, bc});
  EMBER_DISPATCH_DEVICE(out.device(), binary, for_dtype(op, ct), it, p);
  if (KernelCapture* kc = kernel_capture())  // Note [Kernel notes]
    kc->notes.push_back({KernelNote::Kind::Binary, static_cast<int>(for_dtype(op, ct)), {}, p,
                         Scalar(), {ac, bc}, out});
  return out;
}

Tensor binary_scalar(BinaryOp op, const Tensor& a, Scalar b, const BinaryParams& p) {
  const char* name = binary_op_name(op);
  check_defined(name, a, "self");
  OpKind kind = binary_op_kind(op);
  DType ct = compute_dtype(kind, result_type(a, b));
  Tensor ac = cast(a, ct);
  Tensor out = empty(a.sizes(), TensorOptions(output_dtype(kind, ct)).with_device(a.device()));
  TensorIter it(out, {ac});
  EMBER_DISPATCH_DEVICE(out.device(), binary_scalar, for_dtype(op, ct), it, b, p);
  if (KernelCapture* kc = kernel_capture())  // Note [Kernel notes]
    kc->notes.push_back({KernelNote::Kind::BinaryScalar, static_cast<int>(for_dtype(op, ct)), {},
                         p, b, {ac}, out});
  return out;
}

void binary_into(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b,
                 const BinaryParams& p) {
  const char* name = binary_op_name(op);
  check_same_device(name, {&out, &a, &b});
  check_no_overlap(name, out, {&a, &b});
  OpKind kind = binary_op_kind(op);
  DType ct = compute_dtype(kind, result_type(a, b));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  EMBER_CHECK(shape == out.sizes(), "[", name, "_] output with shape ", out.sizes(),
              " doesn't match the broadcast shape ", shape);
  EMBER_CHECK(
      output_dtype(kind, ct) == out.dtype() || (kind != OpKind::Compare && kind != OpKind::Bool),
      "[", name, "_] result type ", output_dtype(kind, ct), " can't be written to ", out.dtype());
  if (out.dtype() != output_dtype(kind, ct)) {
    // e.g. float32.add_(float64): compute in the wider type, then store.
    EMBER_CHECK(can_cast(ct, out.dtype()), "[", name, "_] result type ", ct,
                " can't be cast to the desired output type ", out.dtype());
    Tensor tmp = binary(op, a, b, p);
    TensorIter it(out, {tmp});
    EMBER_DISPATCH_DEVICE(out.device(), copy, it);
    return;
  }
  Tensor ac = cast(a, ct), bc = cast(b, ct);
  if (ct == DType::Bool && op == BinaryOp::Add && p.alpha == 0) bc = zeros_like(bc);  // a + 0 * b
  TensorIter it(out, {ac, bc});
  EMBER_DISPATCH_DEVICE(out.device(), binary, for_dtype(op, ct), it, p);
}

}  // namespace detail

// --- add / sub ---------------------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_OP(add, a, b, alpha);
  check_alpha("add", a, b, alpha);
  Tensor out = detail::binary(BinaryOp::Add, a, b, {alpha.to_double()});
  if (any_requires_grad({&a, &b})) {
    record("AddBackward0", {&out}, {&a, &b},
           [alpha, sa = a.sizes(), sb = b.sizes()](const Tensor& g, const Node& n) -> TensorList {
             Tensor gb;
             if (n.needs_input_grad(1)) gb = sum_to(alpha.to_double() == 1.0 ? g : g * alpha, sb);
             return {n.needs_input_grad(0) ? sum_to(g, sa) : Tensor(), gb};
           });
  }
  return out;
}

Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  EMBER_OP(add, a, b, alpha);
  check_defined("add", a, "self");
  Tensor out = detail::binary_scalar(BinaryOp::Add, a, scaled("add", result_type(a, b), b, alpha));
  if (any_requires_grad({&a}))
    record("AddBackward1", {&out}, {&a}, [](const Tensor& g) -> TensorList { return {g}; });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_OP(sub, a, b, alpha);
  check_alpha("sub", a, b, alpha);
  check_sub_operands(a.dtype(), b.dtype());
  Tensor out = detail::binary(BinaryOp::Sub, a, b, {alpha.to_double()});
  if (any_requires_grad({&a, &b})) {
    record("SubBackward0", {&out}, {&a, &b},
           [alpha, sa = a.sizes(), sb = b.sizes()](const Tensor& g, const Node& n) -> TensorList {
             Tensor gb;
             if (n.needs_input_grad(1)) gb = sum_to(g * (-alpha.to_double()), sb);
             return {n.needs_input_grad(0) ? sum_to(g, sa) : Tensor(), gb};
           });
  }
  return out;
}

Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  EMBER_OP(sub, a, b, alpha);
  check_defined("sub", a, "self");
  DType ct = result_type(a, b);
  check_sub_operands(a.dtype(), b.dtype());
  check_alpha("sub", ct, alpha);
  return add(a, scaled("sub", ct, b, negated(alpha)));
}

Tensor operator-(Scalar a, const Tensor& b) {
  // Negated in the result's dtype: 1.75 - uint8 is float, and a uint8 negation would wrap first.
  check_defined("rsub", b, "self");
  check_sub_operands(b.dtype(), a.dtype());
  return add(neg(cast(b, result_type(b, a))), a);
}

// --- mul / div ---------------------------------------------------------------------------------

Tensor mul(const Tensor& a, const Tensor& b) {
  EMBER_OP(mul, a, b);
  Tensor out = detail::binary(BinaryOp::Mul, a, b);
  if (any_requires_grad({&a, &b})) {
    record(
        "MulBackward0", {&out}, {&a, &b},
        [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) -> TensorList {
          const Tensor& a = sa.get();
          const Tensor& b = sb.get();
          Tensor ga, gb;
          // Conjugates: complex gradients follow PyTorch's convention (conj is free on reals).
          if (n.needs_input_grad(0)) ga = sum_to(g * conj(b), a.sizes());
          if (n.needs_input_grad(1)) gb = sum_to(g * conj(a), b.sizes());
          return {ga, gb};
        });
  }
  return out;
}

Tensor mul(const Tensor& a, Scalar b) {
  EMBER_OP(mul, a, b);
  Tensor out = detail::binary_scalar(BinaryOp::Mul, a, b);
  if (any_requires_grad({&a}))
    record("MulBackward1", {&out}, {&a}, [b](const Tensor& g) -> TensorList { return {g * b}; });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  EMBER_OP(div, a, b);
  Tensor out = detail::binary(BinaryOp::Div, a, b);
  if (any_requires_grad({&a, &b})) {
    record(
        "DivBackward0", {&out}, {&a, &b},
        [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) -> TensorList {
          const Tensor& a = sa.get();
          const Tensor& b = sb.get();
          Tensor ga, gb;
          if (n.needs_input_grad(0)) ga = sum_to(g / conj(b), a.sizes());
          if (n.needs_input_grad(1)) gb = sum_to(-g * conj(a / (b * b)), b.sizes());
          return {ga, gb};
        });
  }
  return out;
}

Tensor div(const Tensor& a, Scalar b) {
  EMBER_OP(div, a, b);
  Tensor out = detail::binary_scalar(BinaryOp::Div, a, b);
  if (any_requires_grad({&a}))
    record("DivBackward1", {&out}, {&a}, [b](const Tensor& g) -> TensorList { return {g / b}; });
  return out;
}

Tensor operator/(Scalar a, const Tensor& b) { return mul(reciprocal(b), a); }

// --- pow ---------------------------------------------------------------------------------------

Tensor pow(const Tensor& a, const Tensor& e) {
  EMBER_OP(pow, a, e);
  Tensor out = detail::binary(BinaryOp::Pow, a, e);
  if (any_requires_grad({&a, &e})) {
    record("PowBackward1", {&out}, {&a, &e},
           [sa = SavedTensor(a), se = SavedTensor(e), so = SavedTensor(out, true)](
               const Tensor& g, const Node& n) -> TensorList {
             const Tensor& a = sa.get();
             const Tensor& e = se.get();
             Tensor ga, gexp;
             if (n.needs_input_grad(0)) ga = sum_to(g * e * pow(a, e - 1.0), a.sizes());
             if (n.needs_input_grad(1)) {
               // d/de a^e = a^e log a, taken as 0 where a == 0 and e >= 0 (PyTorch's convention).
               Tensor mask = logical_and(eq(a, 0.0), ge(e, 0.0));
               gexp = sum_to(where(mask, scalar_tensor(0, g.options()), g * so.get() * log(a)),
                             e.sizes());
             }
             return {ga, gexp};
           });
  }
  return out;
}

Tensor pow(const Tensor& a, Scalar e) {
  EMBER_OP(pow, a, e);
  check_defined("pow", a, "self");
  DType rt = result_type(a, e);
  EMBER_CHECK(is_floating_point(rt) || e.is_floating_point() || e.to_int() >= 0,
              "[pow] integers to negative integer powers are not allowed, got exponent ",
              e.to_int(), " for ", a.dtype());
  // PyTorch runs x^0.5 as sqrt and x^-0.5 as rsqrt for every floating dtype but float16: they
  // differ from pow at -inf (NaN, not inf or 0).
  double ev = e.to_double();
  UnaryOp op = !is_floating_point(rt) || rt == kFloat16 ? UnaryOp::PowScalar
               : ev == 0.5                              ? UnaryOp::Sqrt
               : ev == -0.5                             ? UnaryOp::Rsqrt
                                                        : UnaryOp::PowScalar;
  Tensor out = detail::unary(op, cast(a, rt), {ev, 0});
  if (any_requires_grad({&a})) {
    record("PowBackward0", {&out}, {&a}, [sa = SavedTensor(a), e](const Tensor& g) -> TensorList {
      double p = e.to_double();
      if (p == 0.0) return {zeros_like(g)};
      if (p == 1.0) return {g};
      if (p == 2.0) return {g * sa.get() * 2.0};
      return {g * pow(sa.get(), p - 1.0) * p};
    });
  }
  return out;
}

Tensor pow(Scalar base, const Tensor& e) {
  EMBER_OP(pow, base, e);
  return pow(scalar_tensor(base, TensorOptions(result_type(e, base)).with_device(e.device())), e);
}

// --- maximum / minimum ---------------------------------------------------------------------------

namespace {
// Gradient of max/min: to the winner, split evenly on ties; an operand gets nothing only where it
// strictly loses, so with a NaN both get the whole gradient (PyTorch's masked_fill rule).
TensorList minmax_backward(const Tensor& g, const Tensor& a, const Tensor& b, bool is_max,
                           const Node& n) {
  Tensor a_loses = is_max ? lt(a, b) : gt(a, b);
  Tensor b_loses = is_max ? gt(a, b) : lt(a, b);
  Tensor ties = eq(a, b);
  Tensor zero = scalar_tensor(0, g.options());
  Tensor half = g * 0.5;
  Tensor ga, gb;
  if (n.needs_input_grad(0)) ga = sum_to(where(a_loses, zero, where(ties, half, g)), a.sizes());
  if (n.needs_input_grad(1)) gb = sum_to(where(b_loses, zero, where(ties, half, g)), b.sizes());
  return {ga, gb};
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  EMBER_OP(maximum, a, b);
  Tensor out = detail::binary(BinaryOp::Maximum, a, b);
  if (any_requires_grad({&a, &b})) {
    record("MaximumBackward0", {&out}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) {
             return minmax_backward(g, sa.get(), sb.get(), true, n);
           });
  }
  return out;
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  EMBER_OP(minimum, a, b);
  Tensor out = detail::binary(BinaryOp::Minimum, a, b);
  if (any_requires_grad({&a, &b})) {
    record("MinimumBackward0", {&out}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g, const Node& n) {
             return minmax_backward(g, sa.get(), sb.get(), false, n);
           });
  }
  return out;
}

// --- out= variants
// --------------------------------------------------------------------------------

namespace {
Tensor& binary_out(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  EMBER_CHECK(!any_requires_grad({&a, &b, &out}), "[", binary_op_name(op),
              "_out] functions with out=... arguments don't support automatic differentiation");
  check_defined(binary_op_name(op), out, "out");
  detail::binary_into(op, out, a, b, {alpha});
  out.bump_version();
  return out;
}
}  // namespace

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_OP(add_out, out, a, b, alpha);
  check_alpha("add_out", a, b, alpha);
  return binary_out(BinaryOp::Add, out, a, b, alpha.to_double());
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_OP(sub_out, out, a, b, alpha);
  check_alpha("sub_out", a, b, alpha);
  return binary_out(BinaryOp::Sub, out, a, b, alpha.to_double());
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  EMBER_OP(mul_out, out, a, b);
  return binary_out(BinaryOp::Mul, out, a, b, 1);
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  EMBER_OP(div_out, out, a, b);
  return binary_out(BinaryOp::Div, out, a, b, 1);
}

// --- comparisons and logic (no gradient) --------------------------------------------------------

#define EMBER_COMPARE(name, Op)                   \
  Tensor name(const Tensor& a, const Tensor& b) { \
    EMBER_OP(name, a, b);                         \
    return detail::binary(BinaryOp::Op, a, b);    \
  }                                               \
  Tensor name(const Tensor& a, Scalar b) {        \
    EMBER_OP(name, a, b);                         \
    return detail::binary_scalar(BinaryOp::Op, a, b); \
  }
EMBER_COMPARE(eq, Eq)
EMBER_COMPARE(ne, Ne)
EMBER_COMPARE(lt, Lt)
EMBER_COMPARE(le, Le)
EMBER_COMPARE(gt, Gt)
EMBER_COMPARE(ge, Ge)
#undef EMBER_COMPARE

Tensor logical_and(const Tensor& a, const Tensor& b) {
  EMBER_OP(logical_and, a, b);
  return detail::binary(BinaryOp::LogicalAnd, cast(a, kBool), cast(b, kBool));
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  EMBER_OP(logical_or, a, b);
  return detail::binary(BinaryOp::LogicalOr, cast(a, kBool), cast(b, kBool));
}

// --- ternary -----------------------------------------------------------------------------------

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_OP(where, cond, a, b);
  check_defined("where", cond, "condition");
  check_same_device("where", {&cond, &a, &b});
  DType t = result_type(a, b);
  Shape shape =
      broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, TensorOptions(t).with_device(a.device()));
  TensorIter it(out, {cast(cond, kBool), cast(a, t), cast(b, t)});
  EMBER_DISPATCH_DEVICE(out.device(), where, it);
  if (any_requires_grad({&a, &b})) {
    record("WhereBackward0", {&out}, {&a, &b},
           [c = SavedTensor(cond), sa = a.sizes(), sb = b.sizes()](const Tensor& g,
                                                                   const Node& n) -> TensorList {
             Tensor zero = scalar_tensor(0, g.options());
             Tensor ga, gb;
             if (n.needs_input_grad(0)) ga = sum_to(where(c.get(), g, zero), sa);
             if (n.needs_input_grad(1)) gb = sum_to(where(c.get(), zero, g), sb);
             return {ga, gb};
           });
  }
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  EMBER_OP(where, cond, a, b);
  // The scalar takes part in promotion as a number does: where(c, int_tensor, 0.5) is float.
  return where(cond, a, scalar_tensor(b, TensorOptions(result_type(a, b)).with_device(a.device())));
}

namespace {
Tensor ternary(TernaryOp op, const Tensor& s, const Tensor& t1, const Tensor& t2, double value) {
  const char* name = ternary_op_name(op);
  check_same_device(name, {&s, &t1, &t2});
  DType t = promote_types(promote_types(s.dtype(), t1.dtype()), t2.dtype());
  // addcmul keeps integers (value cast to them, as PyTorch); addcdiv and lerp are for floats.
  if (op == TernaryOp::Addcdiv)
    EMBER_CHECK(is_floating_point(t1.dtype()) || is_floating_point(t2.dtype()) ||
                    is_complex(t1.dtype()) || is_complex(t2.dtype()),
                "[addcdiv] Integer division with addcdiv is no longer supported, and in a future "
                "release addcdiv will perform a true division of tensor1 and tensor2. The "
                "historic addcdiv behavior can be implemented as (input + value * "
                "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                "behavior is just the latter implementation: (input + value * tensor1 / "
                "tensor2), for all dtypes.");
  EMBER_CHECK(op != TernaryOp::Addcmul || t != kBool, "[addcmul] not implemented for 'Bool'");
  if (op != TernaryOp::Addcmul) t = floating_of(t);
  Shape shape = broadcast_shapes(broadcast_shapes(s.sizes(), t1.sizes(), name), t2.sizes(), name);
  Tensor out = empty(shape, TensorOptions(t).with_device(s.device()));
  TensorIter it(out, {cast(s, t), cast(t1, t), cast(t2, t)});
  EMBER_DISPATCH_DEVICE(out.device(), ternary, op, it, TernaryParams{value});
  return out;
}
}  // namespace

Tensor addcmul(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar value) {
  EMBER_OP(addcmul, s, t1, t2, value);
  if (value.is_complex()) return s + t1 * t2 * value;  // the kernel's value is real
  Tensor out = ternary(TernaryOp::Addcmul, s, t1, t2, value.to_double());
  if (any_requires_grad({&s, &t1, &t2})) {
    record("AddcmulBackward0", {&out}, {&s, &t1, &t2},
           [ss = s.sizes(), a = SavedTensor(t1), b = SavedTensor(t2), v = value.to_double()](
               const Tensor& g, const Node& n) -> TensorList {
             Tensor g0, g1, g2;
             if (n.needs_input_grad(0)) g0 = sum_to(g, ss);
             if (n.needs_input_grad(1)) g1 = sum_to(g * conj(b.get()) * v, a.get().sizes());
             if (n.needs_input_grad(2)) g2 = sum_to(g * conj(a.get()) * v, b.get().sizes());
             return {g0, g1, g2};
           });
  }
  return out;
}

Tensor addcdiv(const Tensor& s, const Tensor& t1, const Tensor& t2, Scalar value) {
  EMBER_OP(addcdiv, s, t1, t2, value);
  if (value.is_complex()) return s + t1 / t2 * value;
  Tensor out = ternary(TernaryOp::Addcdiv, s, t1, t2, value.to_double());
  if (any_requires_grad({&s, &t1, &t2})) {
    record("AddcdivBackward0", {&out}, {&s, &t1, &t2},
           [ss = s.sizes(), a = SavedTensor(t1), b = SavedTensor(t2), v = value.to_double()](
               const Tensor& g, const Node& n) -> TensorList {
             Tensor g0, g1, g2;
             if (n.needs_input_grad(0)) g0 = sum_to(g, ss);
             if (n.needs_input_grad(1)) g1 = sum_to(g * v / conj(b.get()), a.get().sizes());
             if (n.needs_input_grad(2))
               g2 = sum_to(-g * v * conj(a.get() / (b.get() * b.get())), b.get().sizes());
             return {g0, g1, g2};
           });
  }
  return out;
}

Tensor lerp(const Tensor& s, const Tensor& end, Scalar weight) {
  EMBER_OP(lerp, s, end, weight);
  // 16-bit tensors compute in float32 with the weight unrounded, as PyTorch's opmath does.
  if (s.dtype() == kFloat16 || s.dtype() == kBFloat16)
    return lerp(s.to(kFloat32), end.to(kFloat32), weight).to(s.dtype());
  double w = weight.to_double();
  Tensor wt = scalar_tensor(weight, TensorOptions(floating_of(s.dtype())).with_device(s.device()));
  Tensor out = ternary(TernaryOp::Lerp, s, end, wt, 0);
  if (any_requires_grad({&s, &end})) {
    record("LerpBackward0", {&out}, {&s, &end},
           [ss = s.sizes(), se = end.sizes(), w](const Tensor& g, const Node& n) -> TensorList {
             Tensor g0, g1;
             if (n.needs_input_grad(0)) g0 = sum_to(g * (1.0 - w), ss);
             if (n.needs_input_grad(1)) g1 = sum_to(g * w, se);
             return {g0, g1};
           });
  }
  return out;
}

Tensor lerp(const Tensor& s, const Tensor& end, const Tensor& weight) {
  EMBER_OP(lerp, s, end, weight);
  EMBER_CHECK(end.dtype() == s.dtype(), "[lerp] expected dtype ", s.dtype(),
              " for `end` but got dtype ", end.dtype());
  EMBER_CHECK(weight.dtype() == s.dtype(), "[lerp] expected dtype ", s.dtype(),
              " for `weight` but got dtype ", weight.dtype());
  Tensor out = ternary(TernaryOp::Lerp, s, end, weight, 0);
  if (any_requires_grad({&s, &end, &weight})) {
    record("LerpBackward1", {&out}, {&s, &end, &weight},
           [a = SavedTensor(s), b = SavedTensor(end), w = SavedTensor(weight)](
               const Tensor& g, const Node& n) -> TensorList {
             Tensor g0, g1, g2;
             if (n.needs_input_grad(0)) g0 = sum_to(g * (1.0 - w.get()), a.get().sizes());
             if (n.needs_input_grad(1)) g1 = sum_to(g * w.get(), b.get().sizes());
             if (n.needs_input_grad(2)) g2 = sum_to(g * (b.get() - a.get()), w.get().sizes());
             return {g0, g1, g2};
           });
  }
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  EMBER_OP(masked_fill, x, mask, value);
  EMBER_CHECK(mask.dtype() == kBool, "[masked_fill] expected a bool mask, got ", mask.dtype());
  check_fits("masked_fill", value, x.dtype());
  return where(mask, scalar_tensor(value, TensorOptions(x.dtype()).with_device(x.device())), x);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  EMBER_OP(masked_fill, x, mask, value);
  EMBER_CHECK(mask.dtype() == kBool, "[masked_fill] expected a bool mask, got ", mask.dtype());
  EMBER_CHECK(value.dim() == 0, "[masked_fill] masked_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ", value.dim(), " dimension(s).");
  // A tensor value keeps its graph: its gradient is the sum of the gradient where mask is set.
  return where(mask, value.to(x.dtype()), x);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  EMBER_OP(allclose, a, b, rtol, atol);
  NoGradGuard no_grad;
  if (a.numel() == 0 && b.numel() == 0) return true;
  DType wide = a.is_complex() || b.is_complex() ? kComplex128 : kFloat64;
  Tensor fa = cast(a, wide), fb = cast(b, wide);
  Tensor diff = abs(fa - fb);
  Tensor tol = abs(fb) * rtol + atol;
  Tensor ok = logical_or(le(diff, tol), logical_and(eq(fa, fb), eq(fa, fa)));  // equal infinities
  return all(ok).item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  EMBER_OP(equal, a, b);
  NoGradGuard no_grad;
  if (a.sizes() != b.sizes()) return false;
  if (a.numel() == 0) return true;
  return all(eq(a, b)).item<bool>();
}

Tensor isfinite(const Tensor& x) {
  EMBER_OP(isfinite, x);
  check_defined("isfinite", x);
  if (!x.is_floating_point() && !x.is_complex()) return ones_like(x, kBool);
  NoGradGuard no_grad;
  return eq(x - x, 0);  // inf - inf and NaN - NaN are NaN; any finite value minus itself is 0
}

// --- in-place methods --------------------------------------------------------------------------

namespace {
template <typename F>
Tensor& inplace_binary(Tensor& self, const Tensor& other, BinaryOp op, const BinaryParams& p,
                       const char* name, F out_of_place) {
  if (any_requires_grad({&self, &other}))
    return inplace_with_grad(self, name, [&](const Tensor& s) { return out_of_place(s); });
  detail::binary_into(op, self, self, other, p);
  self.bump_version();
  return self;
}
template <typename F>
Tensor& inplace_scalar(Tensor& self, Scalar other, BinaryOp op, const char* name, F out_of_place) {
  if (any_requires_grad({&self}))
    return inplace_with_grad(self, name, [&](const Tensor& s) { return out_of_place(s); });
  check_no_overlap(name, self);
  DType ct = result_type(self, other);
  EMBER_CHECK(can_cast(ct, self.dtype()), "[", name, "] result type ", ct,
              " can't be cast to the desired output type ", self.dtype());
  if (ct == self.dtype()) {
    TensorIter it(self, {self});
    EMBER_DISPATCH_DEVICE(self.device(), binary_scalar, for_dtype(op, ct), it, other,
                          BinaryParams{});
  } else {
    self.copy_(detail::binary_scalar(op, self, other));
  }
  self.bump_version();
  return self;
}
}  // namespace

Tensor& detail::binary_inplace_op(BinaryOp op, Tensor& self, const Tensor& other,
                                  Tensor (*fn)(const Tensor&, const Tensor&), const char* name) {
  return inplace_binary(self, other, op, {}, name, [&](const Tensor& s) { return fn(s, other); });
}
Tensor& detail::binary_scalar_inplace_op(BinaryOp op, Tensor& self, Scalar other,
                                         Tensor (*fn)(const Tensor&, Scalar), const char* name) {
  return inplace_scalar(self, other, op, name, [&](const Tensor& s) { return fn(s, other); });
}

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  EMBER_OP_METHOD(add_, other, alpha);
  check_alpha("add_", *this, other, alpha);
  return inplace_binary(*this, other, BinaryOp::Add, {alpha.to_double()}, "add_",
                        [&](const Tensor& s) { return ember::add(s, other, alpha); });
}
Tensor& Tensor::add_(Scalar other, Scalar alpha) {
  EMBER_OP_METHOD(add_, other, alpha);
  Scalar v = scaled("add_", result_type(*this, other), other, alpha);
  return inplace_scalar(*this, v, BinaryOp::Add, "add_",
                        [&](const Tensor& s) { return ember::add(s, v); });
}
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  EMBER_OP_METHOD(sub_, other, alpha);
  check_alpha("sub_", *this, other, alpha);
  check_sub_operands(dtype(), other.dtype());
  return inplace_binary(*this, other, BinaryOp::Sub, {alpha.to_double()}, "sub_",
                        [&](const Tensor& s) { return ember::sub(s, other, alpha); });
}
Tensor& Tensor::sub_(Scalar other, Scalar alpha) {
  EMBER_OP_METHOD(sub_, other, alpha);
  DType ct = result_type(*this, other);
  check_sub_operands(dtype(), other.dtype());
  check_alpha("sub_", ct, alpha);
  return add_(scaled("sub_", ct, other, negated(alpha)));
}
Tensor& Tensor::mul_(const Tensor& other) {
  EMBER_OP_METHOD(mul_, other);
  return inplace_binary(*this, other, BinaryOp::Mul, {}, "mul_",
                        [&](const Tensor& s) { return ember::mul(s, other); });
}
Tensor& Tensor::mul_(Scalar other) {
  EMBER_OP_METHOD(mul_, other);
  return inplace_scalar(*this, other, BinaryOp::Mul, "mul_",
                        [&](const Tensor& s) { return ember::mul(s, other); });
}
Tensor& Tensor::div_(const Tensor& other) {
  EMBER_OP_METHOD(div_, other);
  return inplace_binary(*this, other, BinaryOp::Div, {}, "div_",
                        [&](const Tensor& s) { return ember::div(s, other); });
}
Tensor& Tensor::div_(Scalar other) {
  EMBER_OP_METHOD(div_, other);
  return inplace_scalar(*this, other, BinaryOp::Div, "div_",
                        [&](const Tensor& s) { return ember::div(s, other); });
}
Tensor& Tensor::pow_(const Tensor& e) {
  EMBER_OP_METHOD(pow_, e);
  return inplace_binary(*this, e, BinaryOp::Pow, {}, "pow_",
                        [&](const Tensor& s) { return ember::pow(s, e); });
}
Tensor& Tensor::pow_(Scalar e) {
  EMBER_OP_METHOD(pow_, e);
  if (any_requires_grad({this}))
    return inplace_with_grad(*this, "pow_", [&](const Tensor& s) { return ember::pow(s, e); });
  return copy_(ember::pow(*this, e));
}

namespace {
Tensor& inplace_ternary(Tensor& self, TernaryOp op, const Tensor& t1, const Tensor& t2, double v,
                        const char* name) {
  EMBER_CHECK(self.is_floating_point() || (op == TernaryOp::Addcmul && self.dtype() != kBool),
              "[", name, "] expected a floating point tensor, got ", self.dtype());
  check_same_device(name, {&self, &t1, &t2});
  check_no_overlap(name, self, {&t1, &t2});
  Shape shape =
      broadcast_shapes(broadcast_shapes(self.sizes(), t1.sizes(), name), t2.sizes(), name);
  EMBER_CHECK(shape == self.sizes(), "[", name, "] output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", shape);
  TensorIter it(self, {self, cast(t1, self.dtype()), cast(t2, self.dtype())});
  EMBER_DISPATCH_DEVICE(self.device(), ternary, op, it, TernaryParams{v});
  self.bump_version();
  return self;
}
}  // namespace

Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, Scalar value) {
  EMBER_OP_METHOD(addcmul_, t1, t2, value);
  if (any_requires_grad({this, &t1, &t2}))
    return inplace_with_grad(*this, "addcmul_",
                             [&](const Tensor& s) { return ember::addcmul(s, t1, t2, value); });
  return inplace_ternary(*this, TernaryOp::Addcmul, t1, t2, value.to_double(), "addcmul_");
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value) {
  EMBER_OP_METHOD(addcdiv_, t1, t2, value);
  if (any_requires_grad({this, &t1, &t2}))
    return inplace_with_grad(*this, "addcdiv_",
                             [&](const Tensor& s) { return ember::addcdiv(s, t1, t2, value); });
  return inplace_ternary(*this, TernaryOp::Addcdiv, t1, t2, value.to_double(), "addcdiv_");
}
Tensor& Tensor::lerp_(const Tensor& end, Scalar weight) {
  EMBER_OP_METHOD(lerp_, end, weight);
  if (any_requires_grad({this, &end}))
    return inplace_with_grad(*this, "lerp_",
                             [&](const Tensor& s) { return ember::lerp(s, end, weight); });
  if (dtype() == kFloat16 || dtype() == kBFloat16)  // the weight unrounded, as lerp's
    return copy_(ember::lerp(*this, end, weight));
  Tensor w = scalar_tensor(weight, TensorOptions(dtype()).with_device(device()));
  return inplace_ternary(*this, TernaryOp::Lerp, end, w, 0, "lerp_");
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  EMBER_OP_METHOD(masked_fill_, mask, value);
  if (any_requires_grad({this}))
    return inplace_with_grad(*this, "masked_fill_",
                             [&](const Tensor& s) { return ember::masked_fill(s, mask, value); });
  return copy_(ember::masked_fill(*this, mask, value));
}

}  // namespace ember
