#include "ember/ops/views.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "ember/ops/autograd_support.h"
#include "ember/ops/copy.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/op_entry.h"

namespace ember {
namespace {

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(base.storage(), std::move(sizes), std::move(strides),
                                           offset, base.dtype(), base.device());
  if (GradMode::is_enabled()) {  // views made under no_grad are not differentiable (PyTorch's rule)
    const std::shared_ptr<TensorImpl>& parent = base.impl();
    impl->view_base = parent->view_base ? parent->view_base : parent;
    impl->view_version = base._version();
  }
  return Tensor(std::move(impl));
}

// Strides that let `sizes` view a tensor of (old_sizes, old_strides), if any (PyTorch's
// computeStride): each run of dims contiguous with each other can be re-split freely.
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& sizes) {
  if (old_sizes.empty()) return Shape(sizes.size(), 1);
  int64_t numel = numel_of(old_sizes);
  if (numel == 0) return old_sizes == sizes ? old_strides : contiguous_strides(sizes);
  Shape strides(sizes.size(), 0);
  int64_t view_d = static_cast<int64_t>(sizes.size()) - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old_sizes.size()) - 1; td >= 0; --td) {
    auto t = static_cast<size_t>(td);
    tensor_numel *= old_sizes[t];
    if (td == 0 || (old_sizes[t - 1] != 1 && old_strides[t - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || sizes[static_cast<size_t>(view_d)] == 1)) {
        strides[static_cast<size_t>(view_d)] = view_numel * chunk_base;
        view_numel *= sizes[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base = old_strides[t - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

// Records a view op whose gradient is `backward(g)`.
template <typename F>
Tensor with_grad(Tensor out, const Tensor& in, const char* name, F backward) {
  if (any_requires_grad({&in})) record(name, {&out}, {&in}, std::move(backward));
  return out;
}

Tensor view_impl(const Tensor& t, const Shape& shape, const char* op) {
  check_defined(op, t);
  Shape sizes = infer_size(shape, t.numel(), op);
  std::optional<Shape> strides = view_strides(t.sizes(), t.strides(), sizes);
  EMBER_CHECK(
      strides.has_value(), "[", op, "] view size ", sizes,
      " is not compatible with input tensor's size ", t.sizes(), " and stride ", t.strides(),
      " (at least one dimension spans across two contiguous subspaces); use .reshape(...) instead");
  return with_grad(make_view(t, sizes, *strides, t.storage_offset()), t, "ViewBackward0",
                   [xs = t.sizes()](const Tensor& g) -> TensorList { return {g.reshape(xs)}; });
}

}  // namespace

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  EMBER_OP(unfold, t, dim, size, step);
  check_defined("unfold", t);
  int64_t d = wrap_dim(dim, std::max<int64_t>(t.dim(), 1), "unfold");
  int64_t n = t.dim() == 0 ? 1 : t.size(d);
  EMBER_CHECK(size <= n, "[unfold] maximum size for tensor at dimension ", d, " is ", n,
              " but size is ", size);
  EMBER_CHECK(size >= 0, "[unfold] size is ", size, " but must be >= 0");
  EMBER_CHECK(step > 0, "[unfold] step is ", step, " but must be > 0");
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t stride_d = t.dim() == 0 ? 1 : t.stride(d);
  if (t.dim() > 0) {
    sizes[static_cast<size_t>(d)] = (n - size) / step + 1;
    strides[static_cast<size_t>(d)] = stride_d * step;
  }
  sizes.push_back(size);
  strides.push_back(stride_d);
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
  EMBER_OP(as_strided, t, sizes, strides, offset);
  check_defined("as_strided", t);
  EMBER_CHECK(sizes.size() == strides.size(), "[as_strided] sizes ", sizes, " and strides ",
              strides, " differ in length");
  size_t reach = storage_bytes(sizes, strides, offset, t.dtype(), "as_strided");
  EMBER_CHECK(reach <= t.storage()->nbytes, "[as_strided] sizes ", sizes, ", strides ", strides,
              " and offset ", offset, " reach ", reach, " bytes, out of bounds for a storage of ",
              t.storage()->nbytes, " bytes");
  Tensor out = make_view(t, sizes, strides, offset);
  if (any_requires_grad({&t})) record_view_of(out, t);
  return out;
}

Tensor Tensor::view(const Shape& shape) const {
  EMBER_OP_METHOD(view, shape);
  return view_impl(*this, shape, "view");
}
Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }

Tensor Tensor::reshape(const Shape& shape) const {
  EMBER_OP_METHOD(reshape, shape);
  check_defined("reshape", *this);
  Shape sizes = infer_size(shape, numel(), "reshape");
  if (view_strides(this->sizes(), strides(), sizes)) return view_impl(*this, sizes, "reshape");
  return view_impl(clone(), sizes, "reshape");
}
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.sizes()); }

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  EMBER_OP_METHOD(transpose, d0, d1);
  int64_t n = dim();
  d0 = wrap_dim(d0, n, "transpose");
  d1 = wrap_dim(d1, n, "transpose");
  if (n == 0) return *this;
  Shape sizes = this->sizes(), strides = this->strides();
  std::swap(sizes[static_cast<size_t>(d0)], sizes[static_cast<size_t>(d1)]);
  std::swap(strides[static_cast<size_t>(d0)], strides[static_cast<size_t>(d1)]);
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "TransposeBackward0",
                   [d0, d1](const Tensor& g) -> TensorList { return {g.transpose(d0, d1)}; });
}

Tensor Tensor::t() const {
  EMBER_OP_METHOD(t);
  EMBER_CHECK(dim() <= 2, "[t] expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(const Shape& dims) const {
  EMBER_OP_METHOD(permute, dims);
  int64_t n = dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == n,
              "[permute] number of dims don't match in permute: the tensor has ", n,
              " dims, the permutation ", dims);
  Shape sizes(static_cast<size_t>(n)), strides(static_cast<size_t>(n)),
      inverse(static_cast<size_t>(n));
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[static_cast<size_t>(i)], n, "permute");
    EMBER_CHECK(!seen[static_cast<size_t>(d)], "[permute] repeated dim in permutation ", dims);
    seen[static_cast<size_t>(d)] = true;
    sizes[static_cast<size_t>(i)] = this->sizes()[static_cast<size_t>(d)];
    strides[static_cast<size_t>(i)] = this->strides()[static_cast<size_t>(d)];
    inverse[static_cast<size_t>(d)] = i;
  }
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "PermuteBackward0",
                   [inverse](const Tensor& g) -> TensorList { return {g.permute(inverse)}; });
}

Tensor Tensor::slice(int64_t dim_, int64_t start, int64_t end, int64_t step) const {
  EMBER_OP_METHOD(slice, dim_, start, end, step);
  EMBER_CHECK(dim() > 0, "[slice] cannot slice a 0-dim tensor");
  int64_t d = wrap_dim(dim_, dim(), "slice");
  EMBER_CHECK(step > 0, "[slice] step must be positive, got ", step);
  int64_t size = this->size(d);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape sizes = this->sizes(), strides = this->strides();
  auto du = static_cast<size_t>(d);
  sizes[du] = end == start ? 0 : (end - start - 1) / step + 1;  // no overflow for a huge step
  int64_t offset = storage_offset() + start * strides[du];
  strides[du] *= step;
  return with_grad(make_view(*this, sizes, strides, offset), *this, "SliceBackward0",
                   [xs = this->sizes(), d, start, end, step](const Tensor& g) -> TensorList {
                     Tensor z = zeros(xs, g.options());
                     z.slice(d, start, end, step).copy_(g);
                     return {z};
                   });
}

Tensor Tensor::narrow(int64_t dim_, int64_t start, int64_t length) const {
  EMBER_OP_METHOD(narrow, dim_, start, length);
  int64_t d = wrap_dim(dim_, dim(), "narrow");
  int64_t size = this->size(d);
  // As PyTorch: start == size is allowed (an empty slice at the end); otherwise start wraps like
  // a dim index, so a size-0 dim takes -1 and 0.
  if (start != size) start = wrap_dim(start, size, "narrow");
  EMBER_CHECK(start >= 0 && length >= 0 && length <= size - start, "[narrow] start (", start,
              ") + length (", length, ") exceeds dimension size (", size, ")");
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t dim_, int64_t index) const {
  EMBER_OP_METHOD(select, dim_, index);
  EMBER_CHECK_INDEX(dim() > 0, "[select] invalid index of a 0-dim tensor");
  int64_t d = wrap_dim(dim_, dim(), "select");
  int64_t size = this->size(d);
  EMBER_CHECK_INDEX(index >= -size && index < size, "[select] index ", index,
                    " is out of bounds for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  Shape sizes = this->sizes(), strides = this->strides();
  auto du = static_cast<size_t>(d);
  int64_t offset = storage_offset() + index * strides[du];
  sizes.erase(sizes.begin() + du);
  strides.erase(strides.begin() + du);
  return with_grad(make_view(*this, sizes, strides, offset), *this, "SelectBackward0",
                   [xs = this->sizes(), d, index](const Tensor& g) -> TensorList {
                     Tensor z = zeros(xs, g.options());
                     z.select(d, index).copy_(g);
                     return {z};
                   });
}

Tensor Tensor::squeeze() const {
  EMBER_OP_METHOD(squeeze);
  Shape sizes, strides;
  for (int64_t d = 0; d < dim(); ++d) {
    if (this->sizes()[static_cast<size_t>(d)] != 1) {
      sizes.push_back(this->sizes()[static_cast<size_t>(d)]);
      strides.push_back(this->strides()[static_cast<size_t>(d)]);
    }
  }
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "SqueezeBackward0",
                   [xs = this->sizes()](const Tensor& g) -> TensorList { return {g.reshape(xs)}; });
}

Tensor Tensor::squeeze(int64_t dim_) const {
  EMBER_OP_METHOD(squeeze, dim_);
  int64_t d = wrap_dim(dim_, dim(), "squeeze");  // a 0-dim tensor takes 0 and -1 only
  if (dim() == 0) return *this;
  if (size(d) != 1) return *this;
  Shape sizes = this->sizes(), strides = this->strides();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "SqueezeBackward1",
                   [d](const Tensor& g) -> TensorList { return {g.unsqueeze(d)}; });
}

Tensor Tensor::unsqueeze(int64_t dim_) const {
  EMBER_OP_METHOD(unsqueeze, dim_);
  int64_t d = wrap_dim(dim_, dim() + 1, "unsqueeze");
  Shape sizes = this->sizes(), strides = this->strides();
  auto du = static_cast<size_t>(d);
  int64_t stride = du < sizes.size() ? sizes[du] * strides[du] : 1;
  sizes.insert(sizes.begin() + du, 1);
  strides.insert(strides.begin() + du, stride);
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "UnsqueezeBackward0",
                   [d](const Tensor& g) -> TensorList { return {g.squeeze(d)}; });
}

Tensor Tensor::expand(const Shape& shape) const {
  EMBER_OP_METHOD(expand, shape);
  int64_t n = static_cast<int64_t>(shape.size());
  EMBER_CHECK(n >= dim(), "[expand] the number of sizes provided (", n,
              ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
  Shape sizes(static_cast<size_t>(n)), strides(static_cast<size_t>(n));
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t ti = i - (n - dim());
    auto iu = static_cast<size_t>(i);
    int64_t want = shape[iu];
    if (ti >= 0) {
      int64_t have = this->sizes()[static_cast<size_t>(ti)];
      if (want == -1) want = have;
      EMBER_CHECK(want >= 0, "[expand] invalid size ", want, " at dimension ", i,
                  ". Target sizes: ", shape);
      EMBER_CHECK(have == want || have == 1, "[expand] the expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i,
                  ". Target sizes: ", shape, ". Tensor sizes: ", this->sizes());
      sizes[iu] = want;
      strides[iu] = have == want ? this->strides()[static_cast<size_t>(ti)] : 0;
    } else {
      EMBER_CHECK(want >= 0, "[expand] the expanded size (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      sizes[iu] = want;
      strides[iu] = 0;
    }
  }
  if (sizes == this->sizes()) return *this;
  return with_grad(make_view(*this, sizes, strides, storage_offset()), *this, "ExpandBackward0",
                   [xs = this->sizes()](const Tensor& g) -> TensorList { return {sum_to(g, xs)}; });
}

Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  EMBER_OP_METHOD(flatten, start, end);
  start = wrap_dim(start, dim(), "flatten");
  end = wrap_dim(end, dim(), "flatten");
  if (dim() == 0) return reshape({1});
  EMBER_CHECK(start <= end, "[flatten] start_dim cannot come after end_dim");
  if (start == end) return *this;
  Shape sizes;
  for (int64_t d = 0; d < start; ++d) sizes.push_back(size(d));
  int64_t n = 1;
  for (int64_t d = start; d <= end; ++d) n *= size(d);
  sizes.push_back(n);
  for (int64_t d = end + 1; d < dim(); ++d) sizes.push_back(size(d));
  return reshape(sizes);
}

Tensor Tensor::unflatten(int64_t dim_, const Shape& parts) const {
  EMBER_OP_METHOD(unflatten, dim_, parts);
  int64_t d = wrap_dim(dim_, dim(), "unflatten");
  Shape inner = infer_size(parts, size(d), "unflatten");
  Shape sizes;
  for (int64_t i = 0; i < d; ++i) sizes.push_back(size(i));
  for (int64_t s : inner) sizes.push_back(s);
  for (int64_t i = d + 1; i < dim(); ++i) sizes.push_back(size(i));
  return view(sizes);
}

namespace {
// The pieces' gradients, zeros of shape_of(i) for a piece without one; none when no piece has one.
template <typename ShapeOf>
std::vector<Tensor> zeros_where_missing(const std::vector<Tensor>& grads, ShapeOf shape_of) {
  auto any = std::find_if(grads.begin(), grads.end(), [](const Tensor& g) { return g.defined(); });
  if (any == grads.end()) return {};
  std::vector<Tensor> out;
  for (size_t i = 0; i < grads.size(); ++i)
    out.push_back(grads[i].defined() ? grads[i] : zeros(shape_of(i), any->options()));
  return out;
}
}  // namespace

// The pieces of split and unbind are views, and one node takes all their gradients: it joins
// them in one pass (zeros only for pieces without one), where a node per piece would make a
// zero-filled tensor of the whole size for each and sum them (PyTorch's SplitBackward0 and
// UnbindBackward0). The join is an op, so double backward goes through it.
std::vector<Tensor> Tensor::split(const Shape& split_sizes, int64_t dim_) const {
  EMBER_OP_METHOD(split, split_sizes, dim_);
  EMBER_CHECK(dim() > 0, "[split] cannot split a 0-dim tensor");
  int64_t d = wrap_dim(dim_, dim(), "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0, "[split] split_sizes ", split_sizes, " must be non-negative");
    total += s;
  }
  EMBER_CHECK(total == size(d), "[split] split_sizes ", split_sizes,
              " must sum to the size of dimension ", d, " (", size(d), ")");
  auto du = static_cast<size_t>(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    Shape sizes = this->sizes();
    sizes[du] = s;
    out.push_back(make_view(*this, sizes, strides(), storage_offset() + start * stride(d)));
    start += s;
  }
  if (any_requires_grad({this}))
    record_list("SplitBackward0", out, {*this},
                [xs = this->sizes(), d, split_sizes](std::vector<Tensor>& grads,
                                                     const Node&) -> TensorList {
                  std::vector<Tensor> parts = zeros_where_missing(grads, [&](size_t i) {
                    Shape piece = xs;
                    piece[static_cast<size_t>(d)] = split_sizes[i];
                    return piece;
                  });
                  return {parts.empty() ? Tensor() : cat(parts, d)};
                });
  return out;
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim_) const {
  EMBER_OP_METHOD(split, split_size, dim_);
  int64_t d = wrap_dim(dim_, dim(), "split");
  EMBER_CHECK(split_size > 0 || size(d) == 0, "[split] split_size must be positive, got ",
              split_size);
  Shape sizes;
  for (int64_t start = 0; start < size(d); start += split_size)
    sizes.push_back(std::min(split_size, size(d) - start));
  if (sizes.empty()) sizes.push_back(0);
  return split(sizes, d);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim_) const {
  EMBER_OP_METHOD(chunk, chunks, dim_);
  EMBER_CHECK(chunks > 0, "[chunk] number of chunks must be positive, got ", chunks);
  int64_t d = wrap_dim(dim_, dim(), "chunk");
  if (size(d) == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), narrow(d, 0, 0));
  int64_t each = (size(d) + chunks - 1) / chunks;
  return split(std::max<int64_t>(each, 1), d);
}

std::vector<Tensor> Tensor::unbind(int64_t dim_) const {
  EMBER_OP_METHOD(unbind, dim_);
  EMBER_CHECK_INDEX(dim() > 0, "[unbind] a 0-dim tensor cannot be unbound");
  int64_t d = wrap_dim(dim_, dim(), "unbind");
  auto du = static_cast<size_t>(d);
  Shape sizes = this->sizes(), strides = this->strides();
  sizes.erase(sizes.begin() + du);
  strides.erase(strides.begin() + du);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < size(d); ++i)
    out.push_back(make_view(*this, sizes, strides, storage_offset() + i * stride(d)));
  if (any_requires_grad({this}) && !out.empty())
    record_list("UnbindBackward0", out, {*this},
                [sizes, d](std::vector<Tensor>& grads, const Node&) -> TensorList {
                  std::vector<Tensor> parts =
                      zeros_where_missing(grads, [&](size_t) { return sizes; });
                  return {parts.empty() ? Tensor() : stack(parts, d)};
                });
  return out;
}

}  // namespace ember

namespace ember {
namespace {
// diagonal's geometry over (sizes, strides, offset).
struct DiagGeometry {
  Shape sizes, strides;
  int64_t offset;
};
DiagGeometry diag_geometry(const Tensor& t, int64_t off, int64_t d1, int64_t d2) {
  int64_t len = std::max<int64_t>(
      0, off >= 0 ? std::min(t.size(d1), t.size(d2) - off) : std::min(t.size(d1) + off, t.size(d2)));
  int64_t start = t.storage_offset();
  if (len > 0) start += off >= 0 ? off * t.stride(d2) : -off * t.stride(d1);
  DiagGeometry g{{}, {}, start};
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    g.sizes.push_back(t.size(d));
    g.strides.push_back(t.stride(d));
  }
  g.sizes.push_back(len);
  g.strides.push_back(t.stride(d1) + t.stride(d2));
  return g;
}
}  // namespace

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_OP(diagonal, t, offset, dim1, dim2);
  check_defined("diagonal", t);
  int64_t d1 = wrap_dim(dim1, t.dim(), "diagonal"), d2 = wrap_dim(dim2, t.dim(), "diagonal");
  EMBER_CHECK(d1 != d2, "[diagonal] dimensions cannot be identical ", dim1, ", ", dim2);
  DiagGeometry g = diag_geometry(t, offset, d1, d2);
  return with_grad(make_view(t, g.sizes, g.strides, g.offset), t, "DiagonalBackward0",
                   [xs = t.sizes(), offset, d1, d2](const Tensor& grad) -> TensorList {
                     Tensor gx = zeros(xs, grad.options());
                     NoGradGuard no_grad;
                     DiagGeometry g = diag_geometry(gx, offset, d1, d2);
                     make_view(gx, g.sizes, g.strides, g.offset).copy_(grad);
                     return {gx};
                   });
}

Tensor movedim(const Tensor& t, const Shape& source, const Shape& destination) {
  EMBER_OP(movedim, t, source, destination);
  EMBER_CHECK(source.size() == destination.size(), "[movedim] Invalid source or destination dims: "
              "source (", source, " dims) should contain the same number of dims as destination (",
              destination, " dims)");
  int64_t n = t.dim();
  Shape perm(static_cast<size_t>(n), -1);
  std::vector<bool> used(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    EMBER_CHECK(perm[static_cast<size_t>(d)] == -1 && !used[static_cast<size_t>(s)],
                "[movedim] repeated dim in source or destination");
    perm[static_cast<size_t>(d)] = s;
    used[static_cast<size_t>(s)] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p != -1) continue;
    while (used[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  return t.permute(perm);
}

}  // namespace ember
