#include "ember/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

// Sorted, distinct, wrapped dims; empty means all.
Shape normalize_dims(const Tensor& x, const Shape& dims, const char* op) {
  Shape out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = x.dim() == 0 ? (wrap_dim(d, 0, op), 0) : wrap_dim(d, x.dim(), op);
    EMBER_CHECK(std::find(out.begin(), out.end(), w) == out.end(), "[", op, "] dim ", w,
                " appears multiple times in the list of dims");
    out.push_back(w);
  }
  if (x.dim() == 0) out.clear();
  std::sort(out.begin(), out.end());
  return out;
}

Shape keepdim_shape(const Tensor& x, const Shape& dims) {
  Shape s = x.sizes();
  for (int64_t d : dims) s[static_cast<size_t>(d)] = 1;
  return s;
}

Shape squeezed_shape(const Tensor& x, const Shape& dims) {
  Shape s;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) s.push_back(x.size(d));
  return s;
}

// Runs the backend reduction; the result has the keepdim shape.
Tensor reduce_raw(ReduceOp op, const Tensor& x, const Shape& dims, DType out_dtype,
                  Tensor* indices = nullptr) {
  if (x.dtype() == kBool && (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax ||
                             op == ReduceOp::ArgMin)) {
    // max/min/argmax/argmin of bools as of 0/1 bytes: the same winner and the same first index.
    NoGradGuard no_grad;
    bool values = op == ReduceOp::Max || op == ReduceOp::Min;
    Tensor r = reduce_raw(op, x.to(kUInt8), dims, values ? kUInt8 : out_dtype, indices);
    return values ? r.to(kBool) : r;
  }
  Tensor out = empty(keepdim_shape(x, dims), TensorOptions(out_dtype).with_device(x.device()));
  Tensor idx;
  if (indices) idx = *indices = empty(out.sizes(), TensorOptions(kInt64).with_device(x.device()));
  EMBER_DISPATCH_DEVICE(x.device(), reduce, op, x, dims, out, idx);
  return out;
}

Tensor finish(const Tensor& out, const Tensor& x, const Shape& dims, bool keepdim) {
  return keepdim ? out : out.view(squeezed_shape(x, dims));
}

// Gradient of a reduction, reshaped to broadcast back over x.
Tensor expand_grad(const Tensor& g, const Shape& x_sizes, const Shape& dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim) {
    Shape s = x_sizes;
    for (int64_t d : dims) s[static_cast<size_t>(d)] = 1;
    r = g.reshape(s);
  }
  return r.expand(x_sizes);
}

void check_nonempty(const Tensor& x, const Shape& dims, const char* op) {
  for (int64_t d : dims)
    EMBER_CHECK(x.size(d) != 0, "[", op, "] expected reduction dim ", d,
                " to have non-zero size, got shape ", x.sizes());
  if (dims.empty() && x.dim() > 0)
    EMBER_CHECK(x.numel() > 0, "[", op, "] cannot reduce an empty tensor (shape ", x.sizes(),
                ") without an identity");
}

int64_t count(const Tensor& x, const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.size(d);
  return n;
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims_in, bool keepdim, std::optional<DType> dtype) {
  EMBER_OP(sum, x, dims_in, keepdim, dtype);
  check_defined("sum", x);
  Shape dims = normalize_dims(x, dims_in, "sum");
  Tensor in = dtype && *dtype != x.dtype() ? x.to(*dtype) : x;
  DType out_dtype = is_floating_point(in.dtype()) || is_complex(in.dtype()) ? in.dtype() : kInt64;
  Tensor out = finish(reduce_raw(ReduceOp::Sum, in, dims, out_dtype), in, dims, keepdim);
  if (dtype && *dtype != out_dtype) {  // an integer sum asked for in a narrower type
    NoGradGuard no_grad;
    out = out.to(*dtype);
  }
  if (any_requires_grad({&x})) {
    // PyTorch's names: sum() is SumBackward0, sum(dim) SumBackward1.
    record(dims_in.empty() ? "SumBackward0" : "SumBackward1", {&out}, {&x},
           [xs = x.sizes(), dims, keepdim](const Tensor& g) -> TensorList {
             return {expand_grad(g, xs, dims, keepdim)};
           });
  }
  return out;
}

Tensor sum(const Tensor& x, std::optional<DType> dtype) { return sum(x, Shape{}, false, dtype); }

Tensor mean(const Tensor& x, const Dims& dims_in, bool keepdim) {
  EMBER_OP(mean, x, dims_in, keepdim);
  check_defined("mean", x);
  EMBER_CHECK(x.is_floating_point() || x.is_complex(),
              "[mean] could not infer output dtype: input dtype must be floating point or complex, got ",
              x.dtype());
  Shape dims = normalize_dims(x, dims_in, "mean");
  int64_t n = count(x, dims);
  Tensor s;
  {
    NoGradGuard no_grad;
    // 16-bit means divide the float32 sum and round once, as PyTorch's (rounding the sum to 16
    // bits first can land a unit in the last place away).
    bool narrow = x.dtype() == kFloat16 || x.dtype() == kBFloat16;
    s = narrow ? sum(x, dims, keepdim, kFloat32) : sum(x, dims, keepdim);
    s = n > 0 ? detail::binary_scalar(BinaryOp::Div, s, Scalar(static_cast<double>(n)))
              : full_like(s, std::numeric_limits<double>::quiet_NaN());
    if (narrow) s = s.to(x.dtype());
  }
  if (any_requires_grad({&x})) {
    record(dims_in.empty() ? "MeanBackward0" : "MeanBackward1", {&s}, {&x},
           [xs = x.sizes(), dims, keepdim, n](const Tensor& g) -> TensorList {
             return {expand_grad(g / static_cast<double>(n), xs, dims, keepdim)};
           });
  }
  return s;
}

Tensor mean(const Tensor& x) { return mean(x, Shape{}, false); }

namespace {
// d prod / d x_i along dim is the product of the other elements: prod / x_i when there is no zero;
// with one zero, the zero's gradient is the product of the rest and every other one is 0; with
// two or more, all are 0. Keeps dim.
Tensor prod_grad_factor(const Tensor& x, int64_t dim) {
  Tensor is_zero = eq(x, 0);
  Tensor zero_count = sum(is_zero, {dim}, /*keepdim=*/true);
  Tensor rest = prod(masked_fill(x, is_zero, 1), dim, /*keepdim=*/true);
  return where(is_zero, where(eq(zero_count, 1), rest, 0), where(eq(zero_count, 0), rest / x, 0));
}
}  // namespace

Tensor prod(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(prod, x, dim, keepdim);
  check_defined("prod", x);
  Shape dims = normalize_dims(x, {dim}, "prod");
  DType out_dtype = is_floating_point(x.dtype()) || is_complex(x.dtype()) ? x.dtype() : kInt64;
  Tensor out = finish(reduce_raw(ReduceOp::Prod, x, dims, out_dtype), x, dims, keepdim);
  if (any_requires_grad({&x})) {
    record("ProdBackward1", {&out}, {&x},
           [sx = SavedTensor(x), dim = dims[0], dims, keepdim](const Tensor& g) -> TensorList {
             const Tensor& x = sx.get();
             return {expand_grad(g, x.sizes(), dims, keepdim) * prod_grad_factor(x, dim)};
           });
  }
  return out;
}

Tensor prod(const Tensor& x) {
  EMBER_OP(prod, x);
  check_defined("prod", x);
  DType out_dtype = is_floating_point(x.dtype()) || is_complex(x.dtype()) ? x.dtype() : kInt64;
  Tensor out;
  {
    NoGradGuard no_grad;
    out = reduce_raw(ReduceOp::Prod, x.reshape({-1}), {0}, out_dtype).reshape({});
  }
  if (any_requires_grad({&x})) {
    record("ProdBackward0", {&out}, {&x}, [sx = SavedTensor(x)](const Tensor& g) -> TensorList {
      const Tensor& x = sx.get();
      return {(g * prod_grad_factor(x.reshape({-1}), 0)).reshape(x.sizes())};
    });
  }
  return out;
}

namespace {
// Max/min over dims without indices; gradient split evenly among the elements equal to it.
Tensor amax_amin(const Tensor& x, const Shape& dims_in, bool keepdim, bool is_max,
                 const char* node) {
  const char* name = is_max ? "amax" : "amin";
  check_defined(name, x);
  Shape dims = normalize_dims(x, dims_in, name);
  check_nonempty(x, dims, name);
  Tensor out = finish(reduce_raw(is_max ? ReduceOp::Max : ReduceOp::Min, x, dims, x.dtype()), x,
                      dims, keepdim);
  if (x.dtype() == kBool) return out;  // no gradient
  if (any_requires_grad({&x})) {
    record(node, {&out}, {&x},
           [sx = SavedTensor(x), so = SavedTensor(out, true), dims,
            keepdim](const Tensor& g) -> TensorList {
             const Tensor& x = sx.get();
             Tensor hit = eq(x, expand_grad(so.get(), x.sizes(), dims, keepdim)).to(g.dtype());
             Tensor ties = sum(hit, dims, true);
             return {expand_grad(g, x.sizes(), dims, keepdim) * hit / ties};
           });
  }
  return out;
}

std::tuple<Tensor, Tensor> max_min_dim(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  check_defined(name, x);
  Shape dims = normalize_dims(x, {dim}, name);
  check_nonempty(x, dims, name);
  Tensor idx;
  Tensor values = reduce_raw(is_max ? ReduceOp::Max : ReduceOp::Min, x, dims, x.dtype(), &idx);
  values = finish(values, x, dims, keepdim);
  idx = finish(idx, x, dims, keepdim);
  if (any_requires_grad({&x})) {
    int64_t d = dims.empty() ? 0 : dims[0];
    record(
        is_max ? "MaxBackward0" : "MinBackward0", {&values}, {&x},
        [xs = x.sizes(), si = SavedTensor(idx), d, keepdim, dims](const Tensor& g) -> TensorList {
          Tensor gi = keepdim ? g : g.unsqueeze(d);
          Tensor ii = keepdim ? si.get() : si.get().unsqueeze(d);
          Tensor z = zeros(xs, g.options());
          if (xs.empty()) return {g.reshape({})};
          return {z.scatter_add(d, ii, gi)};
        });
  }
  return {values, idx};
}
}  // namespace

Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) {
  EMBER_OP(amax, x, dims, keepdim);
  return amax_amin(x, dims, keepdim, true, "AmaxBackward0");
}
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) {
  EMBER_OP(amin, x, dims, keepdim);
  return amax_amin(x, dims, keepdim, false, "AminBackward0");
}
// max() and min() of everything: amax's values and gradient, under PyTorch's node names.
Tensor max(const Tensor& x) {
  EMBER_OP(max, x);
  return amax_amin(x, {}, false, true, "MaxBackward1");
}
Tensor min(const Tensor& x) {
  EMBER_OP(min, x);
  return amax_amin(x, {}, false, false, "MinBackward1");
}
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(max, x, dim, keepdim);
  return max_min_dim(x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(min, x, dim, keepdim);
  return max_min_dim(x, dim, keepdim, false);
}

namespace {
Tensor arg(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "argmax" : "argmin";
  check_defined(name, x);
  if (!dim) {
    EMBER_CHECK(x.numel() > 0, "[", name, "] expected a non-empty tensor");
    Tensor flat = x.reshape({-1});
    Tensor r = reduce_raw(is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, flat, {0}, kInt64);
    return keepdim ? r.reshape(Shape(static_cast<size_t>(x.dim()), 1)) : r.reshape({});
  }
  Shape dims = normalize_dims(x, {*dim}, name);
  check_nonempty(x, dims, name);
  return finish(reduce_raw(is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, x, dims, kInt64), x, dims,
                keepdim);
}
}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmax, x, dim, keepdim);
  return arg(x, dim, keepdim, true);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmin, x, dim, keepdim);
  return arg(x, dim, keepdim, false);
}

namespace {

// The variance over dims without autograd, accumulated in float64 for float32 input (as PyTorch's
// Welford accumulates wider): the squared deviations of float32 values overflow float32 long
// before their square root does (the std of two values 1e30 apart is 5e29). Two passes (mean,
// then squared deviations), the mean corrected by the mean deviation: the sum of n equal values
// divided by n can miss the value by an ulp, and a constant row must have a variance of exactly 0
// (std's gradient there is masked to 0, as PyTorch's Welford).
Tensor variance(const Tensor& x, const Shape& dims, double denom, bool keepdim) {
  NoGradGuard no_grad;
  Tensor m = mean(x, dims, true);
  if (count(x, dims) > 0) m = m + mean(x - m, dims, true);
  Tensor centered = x - m;
  if (centered.dtype() == kFloat32) centered = centered.to(kFloat64);
  Tensor ss = sum(centered * centered, dims, keepdim);
  return denom <= 0 ? ss * std::numeric_limits<double>::quiet_NaN() : ss / denom;
}

double variance_denominator(const Tensor& x, const Shape& dims, double correction) {
  return static_cast<double>(count(x, dims)) - correction;
}

}  // namespace

Tensor var(const Tensor& x, const Dims& dims_in, bool unbiased, bool keepdim) {
  return var(x, dims_in, Correction{unbiased ? 1.0 : 0.0}, keepdim);
}

Tensor var(const Tensor& x, const Dims& dims_in, Correction correction, bool keepdim) {
  EMBER_OP(var, x, dims_in, correction, keepdim);
  // Complex: the spread of the real parts plus that of the imaginary ones, a real result.
  if (x.is_complex())
    return var(real(x), dims_in, correction, keepdim) + var(imag(x), dims_in, correction, keepdim);
  EMBER_CHECK(x.is_floating_point(), "[var] expected a floating point tensor, got ", x.dtype());
  // 16-bit floats in float32, as PyTorch accumulates them: squared deviations overflow float16.
  if (x.dtype() == kFloat16 || x.dtype() == kBFloat16)
    return var(x.to(kFloat32), dims_in, correction, keepdim).to(x.dtype());
  Shape dims = normalize_dims(x, dims_in, "var");
  double denom = variance_denominator(x, dims, correction.value);
  Tensor out = variance(x, dims, denom, keepdim).to(x.dtype());
  if (any_requires_grad({&x})) {
    // PyTorch's var_backward, 2 g (x - mean) / denom. Differentiating the two passes would add
    // the mean's term, mathematically 0 but NaN once an element is infinite.
    record("VarBackward0", {&out}, {&x},
           [sx = SavedTensor(x), dims, keepdim, denom](const Tensor& g) -> TensorList {
             const Tensor& x = sx.get();
             Tensor centered = x - mean(x, dims, true);
             return {expand_grad(g, x.sizes(), dims, keepdim) * centered * (2.0 / denom)};
           });
  }
  return out;
}

Tensor std(const Tensor& x, const Dims& dims_in, bool unbiased, bool keepdim) {
  return std(x, dims_in, Correction{unbiased ? 1.0 : 0.0}, keepdim);
}

Tensor std(const Tensor& x, const Dims& dims_in, Correction correction, bool keepdim) {
  EMBER_OP(std, x, dims_in, correction, keepdim);
  check_defined("std", x);
  if (x.is_complex()) return sqrt(var(x, dims_in, correction, keepdim));
  EMBER_CHECK(x.is_floating_point(), "[std] expected a floating point tensor, got ", x.dtype());
  if (x.dtype() == kFloat16 || x.dtype() == kBFloat16)  // the variance overflows float16
    return std(x.to(kFloat32), dims_in, correction, keepdim).to(x.dtype());
  Shape dims = normalize_dims(x, dims_in, "std");
  double denom = variance_denominator(x, dims, correction.value);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sqrt(variance(x, dims, denom, keepdim)).to(x.dtype());  // the root before narrowing
  }
  if (any_requires_grad({&x})) {
    // PyTorch's std_backward: g (x - mean) / (denom std), taken as 0 where std is 0 (sqrt's own
    // gradient there is inf, and inf times the variance's zero gradient would be NaN).
    record("StdBackward0", {&out}, {&x},
           [sx = SavedTensor(x), so = SavedTensor(out, true), dims, keepdim,
            denom](const Tensor& g) -> TensorList {
             const Tensor& x = sx.get();
             Tensor s = expand_grad(so.get(), x.sizes(), dims, keepdim);
             Tensor gs = expand_grad(g, x.sizes(), dims, keepdim);
             Tensor centered = x - mean(x, dims, true);
             return {where(eq(s, 0), scalar_tensor(0, g.options()),
                           gs * centered / (s * denom))};
           });
  }
  return out;
}

namespace {
// all/any give bool, except for uint8 input, which gives uint8 (PyTorch's legacy rule).
Tensor all_any(ReduceOp op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const char* name = op == ReduceOp::All ? "all" : "any";
  check_defined(name, x);
  Tensor b = x.dtype() == kBool ? x : ne(x, 0);
  Shape dims = normalize_dims(b, dim ? Dims(*dim) : Dims(), name);
  Tensor r = dim ? finish(reduce_raw(op, b, dims, kBool), b, dims, keepdim)
                 : reduce_raw(op, b, dims, kBool).reshape({});
  return x.dtype() == kUInt8 ? r.to(kUInt8) : r;
}
}  // namespace

Tensor all(const Tensor& x) {
  EMBER_OP(all, x);
  return all_any(ReduceOp::All, x, std::nullopt, false);
}
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(all, x, dim, keepdim);
  return all_any(ReduceOp::All, x, dim, keepdim);
}
Tensor any(const Tensor& x) {
  EMBER_OP(any, x);
  return all_any(ReduceOp::Any, x, std::nullopt, false);
}
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(any, x, dim, keepdim);
  return all_any(ReduceOp::Any, x, dim, keepdim);
}

Tensor norm(const Tensor& x, Scalar p) { return norm(x, p, Dims(), false); }

Tensor norm(const Tensor& x, Scalar p, const Dims& dims_in, bool keepdim) {
  EMBER_OP(norm, x, p, dims_in, keepdim);
  check_defined("norm", x);
  // Complex: the norm of the magnitudes (their gradient carries the phase back).
  if (x.is_complex()) return norm(abs(x), p, dims_in, keepdim);
  EMBER_CHECK(x.is_floating_point(), "[norm] input dtype should be floating point or complex, got ",
              x.dtype());
  Shape dims = normalize_dims(x, dims_in, "norm");
  double pv = p.to_double();
  if (std::isinf(pv) && x.numel() == 0) return zeros({}, x.options());  // as PyTorch: 0
  if (std::isinf(pv))  // ties share the gradient
    return pv > 0 ? amax(abs(x), dims, keepdim) : amin(abs(x), dims, keepdim);
  Tensor out;
  {
    NoGradGuard no_grad;
    if (pv == 2.0)
      out = sqrt(sum(x * x, dims, keepdim));
    else if (pv == 1.0)
      out = sum(abs(x), dims, keepdim);
    else if (pv == 0)
      out = sum(ne(x, 0).to(x.dtype()), dims, keepdim);  // the number of non-zeros
    else
      out = pow(sum(pow(abs(x), pv), dims, keepdim), 1.0 / pv);
  }
  if (any_requires_grad({&x})) {
    // PyTorch 1.13's norm_backward: x |x|^(p-2) g / norm^(p-1), 0 where the norm is 0 (the
    // composed sqrt or pow would give inf * 0 = NaN there); for p < 2 written sgn(x) |x|^(p-1).
    // p = 1 and p = 2 mask before multiplying by g, so a NaN gradient stays NaN, as there.
    record("NormBackward1", {&out}, {&x},
           [sx = SavedTensor(x), so = SavedTensor(out, true), pv, dims,
            keepdim](const Tensor& g_in) -> TensorList {
             const Tensor& x = sx.get();
             // The norm and its gradient broadcast over the reduced dims.
             Tensor g = expand_grad(g_in, x.sizes(), dims, keepdim);
             Tensor n = expand_grad(so.get(), x.sizes(), dims, keepdim);
             Tensor zero = scalar_tensor(0, g.options());
             if (pv == 0) return {zeros_like(x)};
             if (pv == 1) return {g * sign(x)};
             if (pv == 2) return {g * where(eq(n, 0), zero, x / n)};
             if (pv < 1) {
               // |x|^(p-1) is infinite at 0: those entries get 0 (a subgradient).
               Tensor scaled = where(eq(x, 0), zero, sign(x) * pow(abs(x), pv - 1));
               return {scaled * g * pow(n, 1 - pv)};
             }
             Tensor scaled = pv < 2 ? sign(x) * pow(abs(x), pv - 1) : x * pow(abs(x), pv - 2);
             Tensor scale = where(eq(n, 0), zero, g / pow(n, pv - 1));
             return {scaled * scale};
           });
  }
  return out;
}

Tensor logsumexp(const Tensor& x_in, const Dims& dims_in, bool keepdim) {
  EMBER_OP(logsumexp, x_in, dims_in, keepdim);
  check_defined("logsumexp", x_in);
  // In the result's floating dtype from the start: x - max(x) in an integer dtype overflows.
  Tensor x = x_in.is_floating_point() ? x_in : x_in.to(kDefaultFloat);
  Shape dims = normalize_dims(x, dims_in, "logsumexp");
  if (x.numel() == 0) return log(sum(exp(x), dims, keepdim));  // no max to subtract; -inf
  Tensor m;
  {
    NoGradGuard no_grad;
    m = amax(x, dims, true);
    m = where(eq(abs(m), std::numeric_limits<double>::infinity()), zeros_like(m), m);
  }
  Tensor r = log(sum(exp(x - m), dims, true)) + m;
  return keepdim ? r : r.view(squeezed_shape(x, dims));
}

}  // namespace ember
