#include "ember/ops/search.h"

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/join.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/sort.h"
#include "ember/ops/tensor_index.h"

namespace ember {
namespace {

// Values, inverse and counts of a flat tensor whose equal elements are adjacent; `order` maps
// its positions back to the input's (undefined: already in the input's order).
std::tuple<Tensor, Tensor, Tensor> runs(const Tensor& flat, const Tensor& order,
                                        const Shape& shape) {
  int64_t n = flat.numel();
  TensorOptions i64 = TensorOptions(kInt64).with_device(flat.device());
  if (n == 0) return {flat, empty(shape, i64), empty({0}, i64)};
  // A run starts where an element differs from the one before it.
  Tensor starts = cat({ones({1}, TensorOptions(kBool).with_device(flat.device())),
                       ne(flat.narrow(0, 1, n - 1), flat.narrow(0, 0, n - 1))});
  Tensor run_of = cumsum(starts.to(kInt64), 0) - 1;  // each sorted element's run
  Tensor first = nonzero(starts).reshape({-1});
  Tensor values = index_select(flat, 0, first);
  Tensor ends = cat({first.narrow(0, 1, first.numel() - 1), full({1}, n, i64)});
  Tensor counts = ends - first;
  Tensor inverse = run_of;
  if (order.defined()) inverse = scatter(empty({n}, i64), 0, order, run_of);
  return {values, inverse.reshape(shape), counts};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x) {
  EMBER_OP(unique, x);
  NoGradGuard no_grad;
  auto [sorted, order] = sort(x.reshape({-1}), 0, false, true);
  return runs(sorted, order, x.sizes());
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x) {
  EMBER_OP(unique_consecutive, x);
  NoGradGuard no_grad;
  return runs(x.reshape({-1}), Tensor(), x.sizes());
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  EMBER_OP(bincount, x, weights, minlength);
  EMBER_CHECK(x.dim() == 1 && !x.is_floating_point() && x.dtype() != kBool,
              "[bincount] only 1-d non-negative integral inputs are supported, got ", x.dtype(),
              " of shape ", x.sizes());
  EMBER_CHECK_VALUE(minlength >= 0, "[bincount] minlength should be >= 0, got ", minlength);
  NoGradGuard no_grad;
  int64_t n = minlength;
  if (x.numel() > 0) {
    EMBER_CHECK(amin(x).item<int64_t>() >= 0, "[bincount] input must contain only non-negative "
                "values");
    n = std::max(n, amax(x).item<int64_t>() + 1);
  }
  Tensor idx = x.to(kInt64);
  if (weights.defined()) {
    EMBER_CHECK(weights.sizes() == x.sizes(), "[bincount] weights should have the input's shape ",
                x.sizes(), ", got ", weights.sizes());
    DType t = weights.is_floating_point() ? weights.dtype() : kFloat64;
    return scatter_add(zeros({n}, TensorOptions(t).with_device(x.device())), 0, idx, weights.to(t));
  }
  return scatter_add(zeros({n}, TensorOptions(kInt64).with_device(x.device())), 0, idx,
                     ones_like(idx));
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  EMBER_OP(histc, x, bins, min, max);
  EMBER_CHECK_VALUE(bins > 0, "[histc] bins must be > 0, got ", bins);
  NoGradGuard no_grad;
  Tensor xf = x.reshape({-1}).to(x.is_floating_point() ? x.dtype() : kFloat32);
  if (min == 0 && max == 0 && xf.numel() > 0) {
    min = amin(xf).item<double>();
    max = amax(xf).item<double>();
  }
  if (min == max) {
    min -= 1;
    max += 1;
  }
  EMBER_CHECK_VALUE(min < max, "[histc] max must be larger than min, got min ", min, " max ", max);
  Tensor inside = logical_and(ge(xf, min), le(xf, max));
  Tensor b = floor((xf - min) * (static_cast<double>(bins) / (max - min))).to(kInt64);
  b = clamp(b, Scalar(0), Scalar(bins - 1));  // max itself falls in the last bin
  Tensor w = inside.to(xf.dtype());
  return scatter_add(zeros({bins}, xf.options()), 0, b, w);
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right, bool out_int32) {
  EMBER_OP(searchsorted, sorted, values, right, out_int32);
  NoGradGuard no_grad;
  EMBER_CHECK(sorted.dim() >= 1, "[searchsorted] boundaries must be at least 1-D");
  // The count of boundaries below the value (at most it, with right): compared all at once.
  Tensor b = sorted, v = values;
  bool scalar = values.dim() == 0;
  if (scalar) v = v.reshape({1});
  if (b.dim() == 1) {
    Tensor cmp = right ? le(b, v.unsqueeze(-1)) : lt(b, v.unsqueeze(-1));
    Tensor out = sum(cmp.to(kInt64), {-1});
    if (scalar) out = out.reshape({});
    return out_int32 ? out.to(kInt32) : out;
  }
  EMBER_CHECK(b.dim() == v.dim(), "[searchsorted] boundaries and input must have the same number "
              "of dims (or 1-D boundaries), got ", b.sizes(), " and ", v.sizes());
  Tensor cmp = right ? le(b.unsqueeze(-2), v.unsqueeze(-1)) : lt(b.unsqueeze(-2), v.unsqueeze(-1));
  Tensor out = sum(cmp.to(kInt64), {-1});
  return out_int32 ? out.to(kInt32) : out;
}

Tensor repeat_interleave(const Tensor& repeats) {
  EMBER_OP(repeat_interleave, repeats);
  EMBER_CHECK(repeats.dim() <= 1 && !repeats.is_floating_point(), "[repeat_interleave] repeats "
              "must be a 0-dim or 1-dim integer tensor, got ", repeats.dtype(), " of shape ",
              repeats.sizes());
  NoGradGuard no_grad;
  Tensor r = repeats.reshape({-1}).to(kInt64);
  Tensor ends = cumsum(r, 0);
  int64_t total = ends.numel() == 0 ? 0 : ends.select(0, -1).item<int64_t>();
  // Output position p takes the first index whose running total exceeds p.
  Tensor pos = arange(0, total, 1, TensorOptions(kInt64).with_device(r.device()));
  return searchsorted(ends, pos, true);
}

Tensor count_nonzero(const Tensor& x, const Dims& dims) {
  EMBER_OP(count_nonzero, x, dims);
  NoGradGuard no_grad;
  return sum(ne(x, 0).to(kInt64), dims);
}

}  // namespace ember
