// Unary elementwise ops: dtype rules, dispatch, backward formulas, in-place variants.
#include <limits>

#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/kernel_capture.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/unary_with_grad.h"

namespace ember {
namespace detail {

DType unary_result_dtype(UnaryOp op, DType t) {
  OpKind kind = unary_op_kind(op);
  if (is_complex(t) && op == UnaryOp::Abs) return to_real_dtype(t);
  if (kind == OpKind::Floating && !is_floating_point(t) && !is_complex(t)) return kDefaultFloat;
  if (kind == OpKind::Bool) return kBool;
  // PyTorch on bool: square promotes to int64 as pow(x, 2) does.
  if (t == kBool && op == UnaryOp::Square) return kInt64;
  return t;
}

Tensor unary(UnaryOp op, const Tensor& x, const UnaryParams& p) {
  const char* name = unary_op_name(op);
  check_defined(name, x);
  DType t = x.dtype();
  if (is_complex(t)) {
    if (op == UnaryOp::Abs) return complex_abs(x);
    EMBER_CHECK(op != UnaryOp::Sign, "[sign] Unlike NumPy, torch.sign is not intended to support "
                                     "complex numbers. Please use torch.sgn instead.");
  }
  // PyTorch on bool: sign is the identity.
  if (t == kBool && op == UnaryOp::Sign) return x.clone();
  t = unary_result_dtype(op, t);
  Tensor in = t == x.dtype() ? x : x.to(t);
  Tensor out = empty(in.sizes(), in.options());
  TensorIter it(out, {in});
  EMBER_DISPATCH_DEVICE(out.device(), unary, op, it, p);
  if (KernelCapture* kc = kernel_capture())  // Note [Kernel notes]
    kc->notes.push_back(
        {KernelNote::Kind::Unary, static_cast<int>(op), p, {}, Scalar(), {in}, out});
  return out;
}

}  // namespace detail

namespace detail {

Tensor& unary_inplace(UnaryOp op, Tensor& self, const UnaryParams& p) {
  const char* name = unary_op_name(op);
  OpKind kind = unary_op_kind(op);
  EMBER_CHECK(kind != OpKind::Floating || self.is_floating_point() || self.is_complex(), "[", name,
              "_] result type ",
              kDefaultFloat, " can't be cast to the desired output type ", self.dtype());
  check_no_overlap(name, self);
  TensorIter it(self, {self});
  EMBER_DISPATCH_DEVICE(self.device(), unary, op, it, p);
  self.bump_version();
  return self;
}

Tensor& unary_inplace_op(UnaryOp op, Tensor& self, Tensor (*fn)(const Tensor&), const char* name) {
  check_defined(name, self);
  EMBER_CHECK(!(op == UnaryOp::Abs && self.is_complex()),
              "[abs_] In-place abs is not supported for complex tensors.");
  if (any_requires_grad({&self})) return inplace_with_grad(self, name, fn);
  DType t = unary_result_dtype(op, self.dtype());
  bool identity = op == UnaryOp::Sign && self.dtype() == kBool;
  if (t == self.dtype() && !identity) return unary_inplace(op, self);
  EMBER_CHECK(can_cast(t, self.dtype()), "[", name, "] result type ", t,
              " can't be cast to the desired output type ", self.dtype());
  return self.copy_(fn(self));
}

}  // namespace detail

EMBER_UNARY_WITH_GRAD(neg, Neg, "NegBackward0", false, detail::unary(UnaryOp::Neg, g))
EMBER_UNARY_WITH_GRAD(abs, Abs, "AbsBackward0", true, g* sgn(x))
EMBER_UNARY_WITH_GRAD(exp, Exp, "ExpBackward0", false, g* conj(out))
EMBER_UNARY_WITH_GRAD(log, Log, "LogBackward0", true, g / conj(x))
EMBER_UNARY_WITH_GRAD(sqrt, Sqrt, "SqrtBackward0", false, g / conj(out * 2.0))
EMBER_UNARY_WITH_GRAD(rsqrt, Rsqrt, "RsqrtBackward0", false,
                      g* conj(out * out * out * -0.5))
// The fused backward kernels record nothing: under create_graph (grad mode on in backward) the
// same formulas run as differentiable ops, so that gradients of gradients see them. Complex
// gradients are conjugated as PyTorch's (conj is free on reals).
EMBER_UNARY_WITH_GRAD(tanh, Tanh, "TanhBackward0", false,
                      GradMode::is_enabled() || out.is_complex()
                          ? g * conj(1.0 - out * out)
                          : detail::binary(BinaryOp::TanhBackward, g, out))
EMBER_UNARY_WITH_GRAD(sigmoid, Sigmoid, "SigmoidBackward0", false,
                      GradMode::is_enabled() || out.is_complex()
                          ? g * conj(out * (1.0 - out))
                          : detail::binary(BinaryOp::SigmoidBackward, g, out))
EMBER_UNARY_WITH_GRAD(relu, Relu, "ReluBackward0", false,
                      GradMode::is_enabled() ? where(gt(out, 0), g, zeros_like(g))
                                             : detail::binary(BinaryOp::ReluBackward, g, out))
EMBER_UNARY_WITH_GRAD(sin, Sin, "SinBackward0", true, g* conj(cos(x)))
EMBER_UNARY_WITH_GRAD(cos, Cos, "CosBackward0", true, -g* conj(sin(x)))
EMBER_UNARY_WITH_GRAD(square, Square, "PowBackward0", true, g* conj(x * 2.0))
EMBER_UNARY_WITH_GRAD(reciprocal, Reciprocal, "ReciprocalBackward0", false,
                      -g* conj(out * out))
EMBER_UNARY_WITH_GRAD(sign, Sign, "SignBackward0", false, zeros_like(g))
EMBER_UNARY_WITH_GRAD(floor, Floor, "FloorBackward0", false, zeros_like(g))
EMBER_UNARY_WITH_GRAD(ceil, Ceil, "CeilBackward0", false, zeros_like(g))
EMBER_UNARY_WITH_GRAD(round, Round, "RoundBackward0", false, zeros_like(g))
EMBER_UNARY_WITH_GRAD(log1p, Log1p, "Log1PBackward0", true, g / conj(x + 1.0))
EMBER_UNARY_WITH_GRAD(expm1, Expm1, "Expm1Backward0", false, g* conj(out + 1.0))
EMBER_UNARY_INPLACE(neg, Neg)
EMBER_UNARY_INPLACE(abs, Abs)
EMBER_UNARY_INPLACE(exp, Exp)
EMBER_UNARY_INPLACE(log, Log)
EMBER_UNARY_INPLACE(sqrt, Sqrt)
EMBER_UNARY_INPLACE(rsqrt, Rsqrt)
EMBER_UNARY_INPLACE(tanh, Tanh)
EMBER_UNARY_INPLACE(sigmoid, Sigmoid)
EMBER_UNARY_INPLACE(relu, Relu)
EMBER_UNARY_INPLACE(sin, Sin)
EMBER_UNARY_INPLACE(cos, Cos)
EMBER_UNARY_INPLACE(square, Square)
EMBER_UNARY_INPLACE(reciprocal, Reciprocal)
EMBER_UNARY_INPLACE(sign, Sign)
EMBER_UNARY_INPLACE(floor, Floor)
EMBER_UNARY_INPLACE(ceil, Ceil)
EMBER_UNARY_INPLACE(round, Round)
EMBER_UNARY_INPLACE(log1p, Log1p)
EMBER_UNARY_INPLACE(expm1, Expm1)
#undef EMBER_UNARY_WITH_GRAD
#undef EMBER_UNARY_INPLACE

Tensor logical_not(const Tensor& x) {
  EMBER_OP(logical_not, x);
  return detail::unary(UnaryOp::LogicalNot, x);
}

namespace {
UnaryParams clamp_params(DType t, std::optional<Scalar> min, std::optional<Scalar> max) {
  double lo = -std::numeric_limits<double>::infinity(),
         hi = std::numeric_limits<double>::infinity();
  if (!is_floating_point(t)) {  // integer bounds must stay representable
    lo = t == kInt64 ? -9.2233720368547758e18 : static_cast<double>(integral_min(t));
    hi = t == kInt64 ? 9.2233720368547748e18 : static_cast<double>(integral_max(t));
  }
  if (min) lo = std::max(lo, min->to_double());
  if (max) hi = std::min(hi, max->to_double());
  return {lo, hi};
}
}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_OP(clamp, x, min, max);
  EMBER_CHECK(min || max, "[clamp] at least one of 'min' or 'max' must not be None");
  DType t = x.dtype();
  if (min) t = result_type(x, *min);
  if (max) t = promote_types(t, result_type(x, *max));
  Tensor in = t == x.dtype() ? x : x.to(t);
  Tensor out = detail::unary(UnaryOp::Clamp, in, clamp_params(t, min, max));
  if (any_requires_grad({&x})) {
    record("ClampBackward1", {&out}, {&x},
           [sx = SavedTensor(x), min, max](const Tensor& g) -> TensorList {
             const Tensor& x = sx.get();
             Tensor keep = ones_like(x, kBool);
             if (min) keep = logical_and(keep, ge(x, *min));
             if (max) keep = logical_and(keep, le(x, *max));
             return {where(keep, g, scalar_tensor(0, g.options()))};
           });
  }
  return out;
}

Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max) {
  EMBER_OP(clamp, x, min, max);
  EMBER_CHECK(min.defined() || max.defined(),
              "[clamp] at least one of 'min' or 'max' must not be None");
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x;
    if (min.defined()) out = maximum(out, min);
    if (max.defined()) out = minimum(out, max);
    if (out.is_same(x)) out = x.clone();
  }
  if (any_requires_grad({&x, &min, &max})) {
    // PyTorch's clamp_backward_min_max: x takes the gradient where it is inside the bounds, a
    // bound where it clamped (with min > max, max wins).
    record("ClampBackward0", {&out}, {&x, &min, &max},
           [sx = SavedTensor(x), slo = SavedTensor(min), shi = SavedTensor(max)](
               const Tensor& g, const Node& n) -> TensorList {
             const Tensor &x = sx.get(), &lo = slo.get(), &hi = shi.get();
             Tensor zero = scalar_tensor(0, g.options());
             Tensor gx, glo, ghi;
             if (n.needs_input_grad(0)) {
               Tensor keep = ones_like(x, kBool);
               if (lo.defined()) keep = logical_and(keep, ge(x, lo));
               if (hi.defined()) keep = logical_and(keep, le(x, hi));
               gx = sum_to(where(keep, g, zero), x.sizes());
             }
             if (lo.defined() && n.needs_input_grad(1)) {
               Tensor pred = lt(x, lo);
               if (hi.defined()) pred = logical_and(pred, lt(lo, hi));
               glo = sum_to(where(pred, g, zero), lo.sizes());
             }
             if (hi.defined() && n.needs_input_grad(2)) {
               Tensor pred = gt(x, hi);
               if (lo.defined()) pred = logical_or(pred, lt(hi, lo));
               ghi = sum_to(where(pred, g, zero), hi.sizes());
             }
             return {gx, glo, ghi};
           });
  }
  return out;
}

// --- Tensor methods -----------------------------------------------------------------------------

#define EMBER_UNARY_METHODS(name)                                \
  Tensor Tensor::name() const { return ember::name(*this); } \
  Tensor& Tensor::name##_() { return ember::name##_(*this); }
EMBER_UNARY_METHODS(neg)
EMBER_UNARY_METHODS(abs)
EMBER_UNARY_METHODS(exp)
EMBER_UNARY_METHODS(log)
EMBER_UNARY_METHODS(sqrt)
EMBER_UNARY_METHODS(rsqrt)
EMBER_UNARY_METHODS(tanh)
EMBER_UNARY_METHODS(sigmoid)
EMBER_UNARY_METHODS(relu)
EMBER_UNARY_METHODS(sin)
EMBER_UNARY_METHODS(cos)
EMBER_UNARY_METHODS(square)
EMBER_UNARY_METHODS(reciprocal)
EMBER_UNARY_METHODS(sign)
EMBER_UNARY_METHODS(floor)
EMBER_UNARY_METHODS(ceil)
EMBER_UNARY_METHODS(round)
EMBER_UNARY_METHODS(log1p)
EMBER_UNARY_METHODS(expm1)
#undef EMBER_UNARY_METHODS

Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
Tensor& Tensor::logical_not_() {
  EMBER_CHECK(dtype() == kBool, "[logical_not_] expected a bool tensor, got ", dtype());
  return detail::unary_inplace(UnaryOp::LogicalNot, *this);
}

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_OP_METHOD(clamp_, min, max);
  if (any_requires_grad({this}))
    return inplace_with_grad(*this, "clamp_",
                             [&](const Tensor& s) { return ember::clamp(s, min, max); });
  EMBER_CHECK(min || max, "[clamp_] at least one of 'min' or 'max' must not be None");
  return detail::unary_inplace(UnaryOp::Clamp, *this, clamp_params(dtype(), min, max));
}
Tensor Tensor::clamp_min(Scalar min) const { return ember::clamp(*this, min, std::nullopt); }
Tensor Tensor::clamp_max(Scalar max) const { return ember::clamp(*this, std::nullopt, max); }

}  // namespace ember
