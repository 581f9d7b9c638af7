#include "ember/ops/sort.h"

#include <limits>

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape.h"
#include "ember/ops/views.h"

namespace ember {
namespace {

// x with `dim` moved last, contiguous: the (rows, L) layout the kernels walk.
Tensor rows_last(const Tensor& x, int64_t d) {
  return x.dim() == 0 ? x.reshape({1}) : x.transpose(d, -1).contiguous();
}
// A result made in the rows layout, back to x's dim order.
Tensor from_rows(const Tensor& r, const Tensor& x, int64_t d) {
  return x.dim() == 0 ? r.reshape({}) : r.transpose(d, -1);
}
// The gradient of values taken from x at `indices` along d: scattered back into zeros.
void record_gather_backward(const char* node, const Tensor& values, const Tensor& x,
                            const Tensor& indices, int64_t d) {
  if (!any_requires_grad({&x})) return;
  record(node, {&values}, {&x}, [xs = x.sizes(), opts = x.options(), indices, d](const Tensor& g) {
    Tensor gx = zeros(xs, TensorOptions(g.dtype()).with_device(g.device()));
    if (xs.empty()) return TensorList{g.reshape({})};
    return TensorList{scatter(gx, d, indices, g)};
  });
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  EMBER_OP(sort, x, dim, descending, stable);
  check_defined("sort", x);
  int64_t d = wrap_dim(dim, x.dim(), "sort");
  Tensor in = rows_last(x, d);
  Tensor values = empty(in.sizes(), in.options()), indices = empty(in.sizes(), in.options().with_dtype(kInt64));
  {
    NoGradGuard no_grad;
    EMBER_DISPATCH_DEVICE(x.device(), sort, in, descending, stable, values, indices);
  }
  values = from_rows(values, x, d);
  indices = from_rows(indices, x, d);
  record_gather_backward("SortBackward0", values, x, indices, d);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  EMBER_OP(argsort, x, dim, descending, stable);
  NoGradGuard no_grad;
  return std::get<1>(sort(x, dim, descending, stable));
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  EMBER_OP(topk, x, k, dim, largest, sorted);
  check_defined("topk", x);
  int64_t d = wrap_dim(dim, x.dim(), "topk");
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  EMBER_CHECK(k >= 0 && k <= n, "[topk] k (", k, ") is out of range for dimension ", d,
              " of size ", n);
  EMBER_CHECK(x.dim() > 0 || k == 1,
              "[topk] k = 0 of a 0-dim tensor: a 0-dim result holds one "
              "value, not none (take topk of x.reshape(1))");
  Tensor values, indices;
  {
    NoGradGuard no_grad;
    Tensor in = rows_last(x, d);
    if (x.is_cuda()) {  // the GPU's top-k is its sort, narrowed
      Tensor v = empty(in.sizes(), in.options()), i = empty(in.sizes(), in.options().with_dtype(kInt64));
      sort_cuda(in, largest, true, v, i);
      values = v.narrow(-1, 0, k).contiguous();
      indices = i.narrow(-1, 0, k).contiguous();
    } else {
      Shape s = in.sizes();
      s.back() = k;
      values = empty(s, in.options());
      indices = empty(s, in.options().with_dtype(kInt64));
      topk_cpu(in, k, largest, sorted, values, indices);
    }
  }
  values = from_rows(values, x, d);
  indices = from_rows(indices, x, d);
  record_gather_backward("TopkBackward0", values, x, indices, d);
  return {values, indices};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  EMBER_OP(kthvalue, x, k, dim, keepdim);
  int64_t d = wrap_dim(dim, x.dim(), "kthvalue");
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  EMBER_CHECK(k >= 1 && k <= n, "[kthvalue] k (", k, ") is out of range for dimension ", d,
              " of size ", n);
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions(kInt64).with_device(x.device()))};
  Tensor values, indices;
  if (x.device().is_cpu()) {  // PyTorch's quick select: its index among equal values
    NoGradGuard no_grad;
    Tensor in = rows_last(x, d);
    Shape rows(in.sizes().begin(), in.sizes().end() - 1);
    values = empty(rows, in.options());
    indices = empty(rows, in.options().with_dtype(kInt64));
    if (in.numel() > 0) kthvalue_cpu(in, k, values, indices);
    values = values.unsqueeze(-1).transpose(-1, d).contiguous();
    indices = indices.unsqueeze(-1).transpose(-1, d).contiguous();
  } else {
    auto [v, i] = sort(x.detach(), d, false, true);
    values = v.narrow(d, k - 1, 1).contiguous();
    indices = i.narrow(d, k - 1, 1).contiguous();
  }
  record_gather_backward("KthvalueBackward0", values, x, indices, d);
  if (!keepdim) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}

Tensor median(const Tensor& x) {
  EMBER_OP(median, x);
  EMBER_CHECK(x.numel() > 0, "[median] cannot be called on an empty tensor");
  return std::get<0>(median(x.reshape({-1}), 0));
}

std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  EMBER_OP(median, x, dim, keepdim);
  int64_t d = wrap_dim(dim, x.dim(), "median");
  int64_t n = x.dim() == 0 ? 1 : x.size(d);
  // PyTorch's median: the lower median, equal values ordered by index (its nth_element compares
  // (value, index)), which a stable sort gives; a row with a NaN gives its first NaN.
  auto [v, i] = sort(x, d, false, true);
  Tensor values = x.dim() == 0 ? v : v.narrow(d, (n - 1) / 2, 1);
  Tensor indices = x.dim() == 0 ? i : i.narrow(d, (n - 1) / 2, 1);
  if (x.is_floating_point() && x.dim() > 0 && n > 0) {
    Tensor nan = isnan(x);
    Tensor has_nan = any(nan, d, true);
    Tensor first_nan = argmax(nan.to(kUInt8), d, true);
    values = where(has_nan, scalar_tensor(std::numeric_limits<double>::quiet_NaN(),
                                          values.options()),
                   values);
    indices = where(has_nan, first_nan, indices);
  }
  if (!keepdim && x.dim() > 0) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}

namespace {
DType scan_dtype(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return x.is_floating_point() || x.is_complex() ? x.dtype() : kInt64;
}
Tensor scan(ScanOp op, const Tensor& x, int64_t d, DType out_dtype) {
  Tensor in = rows_last(x, d);
  Tensor out = empty(in.sizes(), TensorOptions(out_dtype).with_device(x.device()));
  EMBER_DISPATCH_DEVICE(x.device(), scan, op, in, out);
  return from_rows(out, x, d).contiguous();
}
// The sum over j >= i along d: the gradient of a running sum.
Tensor reverse_cumsum(const Tensor& g, int64_t d) {
  if (g.dim() == 0) return g;
  return flip(cumsum(flip(g, {d}), d), {d});
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_OP(cumsum, x, dim, dtype);
  check_defined("cumsum", x);
  int64_t d = wrap_dim(dim, x.dim(), "cumsum");
  Tensor out;
  {
    NoGradGuard no_grad;
    out = scan(ScanOp::Sum, x, d, scan_dtype(x, dtype));
  }
  if (any_requires_grad({&x}))
    record("CumsumBackward0", {&out}, {&x}, [d, in_dtype = x.dtype()](const Tensor& g) {
      return TensorList{reverse_cumsum(g, d).to(in_dtype)};
    });
  return out;
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_OP(cumprod, x, dim, dtype);
  check_defined("cumprod", x);
  int64_t d = wrap_dim(dim, x.dim(), "cumprod");
  Tensor out;
  {
    NoGradGuard no_grad;
    out = scan(ScanOp::Prod, x, d, scan_dtype(x, dtype));
  }
  if (any_requires_grad({&x})) {
    // d out_j / d x_i = out_j / x_i (j >= i) where no zero came before; at the first zero of a
    // row the product without it, beyond it 0 (PyTorch's cumprod_backward, in tensor ops).
    record("CumprodBackward0", {&out}, {&x},
           [sx = SavedTensor(x), so = SavedTensor(out, true), d](const Tensor& g) {
             const Tensor& x = sx.get();
             const Tensor& out = so.get();
             Tensor zero = eq(x, 0);
             Tensor zeros_so_far = cumsum(zero, d);
             Tensor before = eq(zeros_so_far, 0);
             Tensor first_zero = logical_and(zero, eq(zeros_so_far, 1));
             Tensor one = scalar_tensor(1, x.options());
             Tensor safe_x = where(before, x, one);
             Tensor out_skip = cumprod(where(first_zero, one, x), d);
             Tensor g_before = reverse_cumsum(g * out, d) / safe_x;
             Tensor g_first = reverse_cumsum(g * out_skip, d);
             Tensor z = scalar_tensor(0, g.options());
             return TensorList{where(before, g_before, where(first_zero, g_first, z))};
           });
  }
  return out;
}

}  // namespace ember
