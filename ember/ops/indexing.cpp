#include "ember/ops/indexing.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/reduce.h"
#include "ember/ops/tensor_index.h"

namespace ember {
namespace {

// Sizes as the kernels see them: a 0-dim tensor is one element.
int64_t size_at(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }

void check_index(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                 const Tensor* src) {
  check_defined(op, index, "index");
  check_same_device(op, {&x, &index, src ? src : &x});
  EMBER_CHECK(index.dtype() == kInt64, "[", op, "] expected an int64 index, got ", index.dtype());
  EMBER_CHECK(index.dim() == x.dim() || (index.dim() <= 1 && x.dim() <= 1), "[", op,
              "] index tensor must have the same number of dimensions as input tensor, got ",
              index.dim(), " and ", x.dim());
  if (src) {
    check_defined(op, *src, "src");
    EMBER_CHECK(src->dtype() == x.dtype(), "[", op,
                "] expected self and src to have the same dtype, got ", x.dtype(), " and ",
                src->dtype());
    EMBER_CHECK(src->dim() == index.dim() || (src->dim() <= 1 && index.dim() <= 1), "[", op,
                "] index tensor must have the same number of dimensions as src tensor, got ",
                index.dim(), " and ", src->dim());
  }
  for (int64_t d = 0; d < index.dim(); ++d) {
    // src is read at every index position, dim included.
    if (src)
      EMBER_CHECK(index.size(d) <= size_at(*src, d), "[", op, "] size of index ", index.sizes(),
                  " does not fit src ", src->sizes(), " at dimension ", d);
    if (d == dim) continue;
    EMBER_CHECK(index.size(d) <= size_at(x, d), "[", op, "] size of index ", index.sizes(),
                " does not fit the input ", x.sizes(), " at dimension ", d);
  }
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_OP(gather, x, dim, index);
  check_defined("gather", x);
  int64_t d = wrap_dim(dim, x.dim(), "gather");
  // An empty index gathers nothing, whatever its dtype and rank (as PyTorch's); autograd still
  // follows the (empty) result.
  if (index.defined() && index.numel() == 0) {
    Tensor out = empty(index.sizes(), x.options());
    if (any_requires_grad({&x}))
      record("GatherBackward0", {&out}, {&x}, [xs = x.sizes()](const Tensor& g) {
        return TensorList{zeros(xs, g.options())};
      });
    return out;
  }
  check_index("gather", x, d, index, nullptr);
  Tensor out = empty(index.sizes(), x.options());
  Tensor xv = x.dim() == 0 ? x.reshape({1}) : x;
  Tensor iv = index.dim() == 0 ? index.reshape({1}) : index;
  Tensor ov = out.dim() == 0 ? out.reshape({1}) : out;
  EMBER_DISPATCH_DEVICE(x.device(), gather, xv, d, iv, ov);
  if (any_requires_grad({&x})) {
    record("GatherBackward0", {&out}, {&x},
           [xs = x.sizes(), d, si = SavedTensor(index)](const Tensor& g) -> TensorList {
             return {scatter_add(zeros(xs, g.options()), d, si.get(), g)};
           });
  }
  return out;
}

namespace {
// The kernels see 0-dim operands as one element.
void scatter_into(const Tensor& out, int64_t d, const Tensor& index, const Tensor& src,
                  ScatterReduce reduce) {
  auto one_d = [](const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; };
  EMBER_DISPATCH_DEVICE(out.device(), scatter, one_d(out), d, one_d(index), one_d(src), reduce);
}

// scatter (accumulate false) or scatter_add into a copy of x, with its backward: a written
// position's gradient goes to src (gathered back); x keeps the gradient of positions not
// overwritten (all of them for scatter_add).
Tensor scatter_copy(const char* op, const Tensor& x, int64_t dim, const Tensor& index,
                    const Tensor& src, bool accumulate) {
  check_defined(op, x);
  int64_t d = wrap_dim(dim, x.dim(), op);
  check_index(op, x, d, index, &src);
  Tensor out = x.clone();
  {
    NoGradGuard no_grad;
    scatter_into(out, d, index, src, accumulate ? ScatterReduce::Sum : ScatterReduce::Assign);
  }
  if (any_requires_grad({&x, &src})) {
    record(accumulate ? "ScatterAddBackward0" : "ScatterBackward0", {&out}, {&x, &src},
           [d, si = SavedTensor(index), accumulate](const Tensor& g, const Node& n) -> TensorList {
             Tensor gx, gsrc;
             if (n.needs_input_grad(1)) gsrc = gather(g, d, si.get());
             if (n.needs_input_grad(0))
               gx = accumulate ? g : scatter(g, d, si.get(), zeros(si.get().sizes(), g.options()));
             return {gx, gsrc};
           });
  }
  return out;
}

ScatterReduce reduction_of(std::string_view reduce) {
  if (reduce == "sum" || reduce == "mean") return ScatterReduce::Sum;
  if (reduce == "prod") return ScatterReduce::Prod;
  if (reduce == "amax") return ScatterReduce::Max;
  EMBER_CHECK_VALUE(reduce == "amin", "reduce argument must be either sum, prod, mean, amax or "
                    "amin, got ", reduce);
  return ScatterReduce::Min;
}

// Where index sends something along d: a bool tensor of x's shape.
Tensor written(const Tensor& x, int64_t d, const Tensor& index) {
  Tensor hit = zeros(x.sizes(), TensorOptions(kBool).with_device(x.device()));
  scatter_into(hit, d, index, ones(index.sizes(), TensorOptions(kBool).with_device(x.device())),
               ScatterReduce::Assign);
  return hit;
}

// The forward without autograd (the backward of prod calls it too).
Tensor scatter_reduce_values(const Tensor& x, int64_t d, const Tensor& index, const Tensor& src,
                             std::string_view reduce, bool include_self) {
  NoGradGuard no_grad;
  ScatterReduce r = reduction_of(reduce);
  Tensor out = x.clone();
  if (!include_self) {
    // The positions written start from the reduction's identity; for amax and amin, from one of
    // the values that arrive there (any of them leaves the same extreme).
    if (r == ScatterReduce::Max || r == ScatterReduce::Min)
      scatter_into(out, d, index, src, ScatterReduce::Assign);
    else
      out = masked_fill(out, written(x, d, index), r == ScatterReduce::Prod ? 1 : 0);
  }
  scatter_into(out, d, index, src, r);
  if (reduce == "mean") {
    Tensor count = zeros(x.sizes(), x.options());
    scatter_into(count, d, index, ones(index.sizes(), x.options()), ScatterReduce::Sum);
    if (include_self) count = count + 1;
    count = masked_fill(count, eq(count, 0), 1);
    out = x.is_floating_point() ? div(out, count) : div(out, count, "floor");
  }
  return out;
}

Tensor& scatter_inplace(const char* op, Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& src, bool accumulate) {
  if (any_requires_grad({&self, &src}))
    return inplace_with_grad(self, op, [&](const Tensor& s) {
      return scatter_copy(op, s, dim, index, src, accumulate);
    });
  int64_t d = wrap_dim(dim, self.dim(), op);
  check_index(op, self, d, index, &src);
  check_no_overlap(op, self, {&index, &src});
  scatter_into(self, d, index, src, accumulate ? ScatterReduce::Sum : ScatterReduce::Assign);
  self.bump_version();
  return self;
}
// PyTorch's scatter_reduce_backward: sum and mean spread the gradient back (mean over each
// position's count); prod divides the result by each factor, with the product of the others
// computed directly where a factor is 0; amax and amin split it evenly among the values equal to
// the result.
TensorList scatter_reduce_backward(const Tensor& g, const Tensor& self, int64_t d,
                                   const Tensor& index, const Tensor& src, const std::string& mode,
                                   bool include_self, const Tensor& result) {
  Tensor gself, gsrc;
  if (mode == "sum") {
    gself = g;
    gsrc = gather(g, d, index);
  } else if (mode == "mean") {
    Tensor count = include_self ? ones_like(g) : zeros_like(g);
    count = scatter_add(count, d, index, ones(index.sizes(), g.options()));
    count = masked_fill(count, eq(count, 0), 1);
    gself = g / count;
    gsrc = gather(g, d, index) / gather(count, d, index);
  } else if (mode == "prod") {
    Tensor masked_self = masked_fill(self, eq(self, 0), 1);
    Tensor masked_self_result =
        scatter_reduce_values(masked_self, d, index, src, mode, include_self);
    gself = g * masked_self_result / masked_self;
    Tensor src_zero = eq(src, 0);
    Tensor zeros_there = gather(scatter_add(zeros_like(self), d, index, src_zero.to(self.dtype())),
                                d, index);
    Tensor single_zero = logical_and(src_zero, eq(zeros_there, 1));
    Tensor masked_src_result = scatter_reduce_values(self, d, index,
                                                     masked_fill(src, single_zero, 1), mode,
                                                     include_self);
    gsrc = where(single_zero, gather(g * masked_src_result, d, index),
                 gather(g * result, d, index) / masked_fill(src, src_zero, 1));
  } else {
    Tensor value = gather(result, d, index);
    Tensor self_is = eq(self, result), src_is = eq(src, value);
    Tensor share = scatter_add(self_is.to(self.dtype()), d, index, src_is.to(self.dtype()));
    Tensor spread = g / share;
    gself = self_is.to(g.dtype()) * spread;
    gsrc = src_is.to(g.dtype()) * gather(spread, d, index);
  }
  if (!include_self) gself = masked_fill(gself, written(self, d, index), 0);
  return {gself, gsrc};
}

}  // namespace

Tensor take_along_dim(const Tensor& x, const Tensor& index, std::optional<int64_t> dim) {
  EMBER_OP(take_along_dim, x, index, dim);
  check_defined("take_along_dim", x);
  if (!dim) return gather(x.reshape({-1}), 0, index.reshape({-1}));
  EMBER_CHECK(x.dim() == index.dim(), "[take_along_dim] torch.take_along_dim(): input and indices "
              "should have the same number of dimensions, but got ", x.dim(),
              " dimensions for input, and ", index.dim(), " dimensions for indices");
  int64_t d = wrap_dim(*dim, x.dim(), "take_along_dim");
  Shape xs = x.sizes(), is = index.sizes();
  xs[static_cast<size_t>(d)] = 1;
  is[static_cast<size_t>(d)] = 1;
  Shape b = broadcast_shapes(xs, is, "take_along_dim");
  Shape bx = b, bi = b;
  bx[static_cast<size_t>(d)] = x.size(d);
  bi[static_cast<size_t>(d)] = index.size(d);
  return gather(x.expand(bx), d, index.expand(bi));
}

Tensor take(const Tensor& x, const Tensor& index) {
  EMBER_OP(take, x, index);
  check_defined("take", x);
  return gather(x.reshape({-1}), 0, index.reshape({-1})).view(index.sizes());
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP(scatter, x, dim, index, src);
  return scatter_copy("scatter", x, dim, index, src, false);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP(scatter_add, x, dim, index, src);
  return scatter_copy("scatter_add", x, dim, index, src, true);
}

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  EMBER_OP(scatter_reduce, x, dim, index, src, reduce, include_self);
  check_defined("scatter_reduce", x);
  int64_t d = wrap_dim(dim, x.dim(), "scatter_reduce");
  check_index("scatter_reduce", x, d, index, &src);
  Tensor out = scatter_reduce_values(x, d, index, src, reduce, include_self);
  if (any_requires_grad({&x, &src})) {
    record("ScatterReduceBackward0", {&out}, {&x, &src},
           [d, mode = reduce, include_self, sx = SavedTensor(x),
            si = SavedTensor(index), ss = SavedTensor(src),
            so = SavedTensor(out, true)](const Tensor& g, const Node& n) -> TensorList {
             return scatter_reduce_backward(g, sx.get(), d, si.get(), ss.get(), mode,
                                            include_self, so.get());
           });
  }
  return out;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_OP(index_select, x, dim, index);
  check_defined("index_select", x);
  EMBER_CHECK(index.dim() <= 1, "[index_select] index must be 0-D or 1-D, got ", index.sizes());
  EMBER_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32,
              "[index_select] expected an integer index, got ", index.dtype());
  int64_t d = wrap_dim(dim, x.dim(), "index_select");
  Tensor idx = index.to(kInt64).reshape({-1});
  EMBER_CHECK(x.dim() > 0 || idx.numel() == 1,
              "[index_select] a 0-dim input takes an index of one element, got ", index.sizes());
  int64_t size = x.dim() == 0 ? 1 : x.size(d);
  if (idx.numel() > 0 && x.numel() == 0) {
    // The gather below checks each index it reads; an empty result reads none.
    int64_t lo = min(idx).item<int64_t>(), hi = max(idx).item<int64_t>();
    EMBER_CHECK_INDEX(lo >= -size && hi < size, "[index_select] index ", lo < -size ? lo : hi,
                      " is out of bounds for dimension ", d, " with size ", size);
  }
  // out[.., i, ..] = x[.., idx[i], ..]: a gather with the index broadcast over the other dims.
  Shape view(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), 1);
  Shape target = x.dim() == 0 ? Shape{1} : x.sizes();
  view[static_cast<size_t>(d)] = idx.numel();
  target[static_cast<size_t>(d)] = idx.numel();
  Tensor full_index = idx.view(view).expand(target);  // stride 0 off `dim`: rows are copied whole
  Tensor out = gather(x.dim() == 0 ? x.reshape({1}) : x, d, full_index);
  if (index.dim() == 0 && x.dim() > 0) return out;
  return x.dim() == 0 ? out.reshape({}) : out;
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  EMBER_OP(one_hot, indices, num_classes);
  EMBER_CHECK(indices.dtype() == kInt64,
              "[one_hot] one_hot is only applicable to index tensor (int64), got ",
              indices.dtype());
  if (num_classes < 0) {
    EMBER_CHECK(indices.numel() > 0,
                "[one_hot] can not infer total number of classes from an empty tensor");
    num_classes = max(indices).item<int64_t>() + 1;
  }
  if (indices.numel() > 0) {
    EMBER_CHECK(min(indices).item<int64_t>() >= 0, "[one_hot] class values must be non-negative");
    EMBER_CHECK(max(indices).item<int64_t>() < num_classes,
                "[one_hot] class values must be smaller than num_classes (", num_classes, ")");
  }
  Tensor classes = arange(num_classes, TensorOptions(kInt64).with_device(indices.device()));
  return eq(indices.unsqueeze(-1), classes).to(kInt64);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  EMBER_OP(embedding, weight, indices);
  check_defined("embedding", weight, "weight");
  check_defined("embedding", indices, "indices");
  EMBER_CHECK(weight.dim() == 2, "[embedding] expected a 2-D weight, got ", weight.sizes());
  EMBER_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32,
              "[embedding] expected an integer index tensor, got ", indices.dtype());
  Shape out_sizes = indices.sizes();
  out_sizes.push_back(weight.size(1));
  return index_select(weight, 0, indices.reshape({-1})).view(out_sizes);
}

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type) {
  EMBER_OP(embedding_renorm_, weight, indices, max_norm, norm_type);
  EMBER_CHECK(weight.dim() == 2, "[embedding_renorm_] expected a 2-D weight, got ",
              weight.sizes());
  NoGradGuard no_grad;
  Tensor flat = indices.reshape({-1});
  Tensor rows = index_select(weight, 0, flat);
  // PyTorch's arithmetic: each row's norm in the weight's dtype, the scale max_norm / (norm +
  // 1e-7) in double, the row times it rounded once.
  Tensor n = norm(rows, norm_type, Dims{1}, true).to(kFloat64);
  Tensor scale = where(gt(n, max_norm), max_norm / (n + 1e-7), ones_like(n));
  DType acc = weight.dtype() == kFloat64 ? kFloat64 : kFloat32;
  index_put_(weight, {TensorIndex(flat)}, (rows.to(acc) * scale.to(acc)).to(weight.dtype()));
  return weight;
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ember::gather(*this, dim, index);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP_METHOD(scatter_, dim, index, src);
  return scatter_inplace("scatter_", *this, dim, index, src, false);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP_METHOD(scatter_add_, dim, index, src);
  return scatter_inplace("scatter_add_", *this, dim, index, src, true);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  EMBER_OP(index_add, x, dim, index, source, alpha);
  int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_add");
  EMBER_CHECK(index.dim() <= 1, "[index_add] index should be a vector, got shape ", index.sizes());
  Tensor src = x.dim() == 0 ? source.reshape({1}) : source;
  EMBER_CHECK(src.dim() == std::max<int64_t>(x.dim(), 1) && src.size(d) == index.numel(),
              "[index_add] source of shape ", source.sizes(), " does not match ", index.numel(),
              " indices along dim ", d, " of ", x.sizes());
  // scatter_add with the index broadcast over source's other dims.
  Shape s(static_cast<size_t>(src.dim()), 1);
  s[static_cast<size_t>(d)] = index.numel();
  Tensor idx = index.reshape(s).expand(src.sizes());
  Tensor base = x.dim() == 0 ? x.reshape({1}) : x;
  Tensor out = scatter_add(base, d, idx, alpha.to_double() == 1 ? src : src * alpha);
  return x.dim() == 0 ? out.reshape({}) : out;
}

}  // namespace ember
