#include "ember/ops/shape.h"

#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/join.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/views.h"

namespace ember {

Tensor flip(const Tensor& x, const Shape& dims) {
  EMBER_OP(flip, x, dims);
  check_defined("flip", x);
  Tensor out = x;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), false);
  for (int64_t dim : dims) {
    int64_t d = wrap_dim(dim, x.dim(), "flip");
    EMBER_CHECK(!seen[static_cast<size_t>(d)], "[flip] dim ", d, " appears multiple times in the "
                "list of dims");
    seen[static_cast<size_t>(d)] = true;
    int64_t n = x.size(d);
    out = index_select(out, d, arange(n - 1, -1, -1, TensorOptions(kInt64).with_device(x.device())));
  }
  return dims.empty() ? x.clone() : out;
}

Tensor rot90(const Tensor& x, int64_t k, const Shape& dims) {
  EMBER_OP(rot90, x, k, dims);
  check_defined("rot90", x);
  EMBER_CHECK(dims.size() == 2, "[rot90] expected total rotation dims == 2, but got dims = ",
              dims.size());
  EMBER_CHECK(x.dim() >= 2, "[rot90] expected total dims >= 2, but got total dims = ", x.dim());
  int64_t d0 = wrap_dim(dims[0], x.dim(), "rot90"), d1 = wrap_dim(dims[1], x.dim(), "rot90");
  EMBER_CHECK(d0 != d1, "[rot90] expected rotation dims to be different, but got dim0 = ", d0,
              " and dim1 = ", d1);
  k = ((k % 4) + 4) % 4;
  if (k == 0) return x.clone();
  if (k == 2) return flip(x, {d0, d1});
  if (k == 1) return flip(x, {d1}).transpose(d0, d1);
  return flip(x, {d0}).transpose(d0, d1);
}


Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims) {
  EMBER_OP(roll, x, shifts, dims);
  check_defined("roll", x);
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, "[roll] expected one shift without dims, got ", shifts.size());
    return roll(x.reshape({-1}), shifts, {0}).view(x.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "[roll] shifts (", shifts.size(),
              ") and dimensions (", dims.size(), ") must align");
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], x.dim(), "roll"), n = x.size(d);
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.data_ptr() == x.data_ptr() ? x.clone() : out;
}

namespace {
// Where a matrix element (i, j) keeps its value: j - i <= k (lower) or >= k (upper).
Tensor triangle_mask(const Tensor& x, int64_t k, bool lower) {
  EMBER_CHECK(x.dim() >= 2, "[", lower ? "tril" : "triu", "] expected a tensor of 2 or more dims, "
              "got shape ", x.sizes());
  TensorOptions o = TensorOptions(kInt64).with_device(x.device());
  Tensor rows = arange(x.size(-2), o).unsqueeze(1), cols = arange(x.size(-1), o).unsqueeze(0);
  Tensor diff = cols - rows;
  return lower ? le(diff, k) : ge(diff, k);
}
}  // namespace

Tensor tril(const Tensor& x, int64_t k) {
  EMBER_OP(tril, x, k);
  return where(triangle_mask(x, k, true), x, scalar_tensor(0, x.options()));
}
Tensor triu(const Tensor& x, int64_t k) {
  EMBER_OP(triu, x, k);
  return where(triangle_mask(x, k, false), x, scalar_tensor(0, x.options()));
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_OP(diag_embed, x, offset, dim1, dim2);
  int64_t n = x.dim() + 1;
  int64_t d1 = wrap_dim(dim1, n, "diag_embed"), d2 = wrap_dim(dim2, n, "diag_embed");
  int64_t len = (x.dim() == 0 ? 1 : x.size(-1)) + std::abs(offset);
  Shape s;
  for (int64_t d = 0, k = 0; d < n; ++d)
    s.push_back(d == d1 || d == d2 ? len : x.size(k++));
  Tensor out = zeros(s, x.options());
  {
    NoGradGuard no_grad;
    diagonal(out, offset, d1, d2).copy_(x);
  }
  if (any_requires_grad({&x}))
    record("DiagEmbedBackward0", {&out}, {&x}, [offset, d1, d2](const Tensor& g) {
      return TensorList{diagonal(g, offset, d1, d2).contiguous()};
    });
  return out;
}

Tensor diag(const Tensor& x, int64_t k) {
  EMBER_OP(diag, x, k);
  EMBER_CHECK(x.dim() == 1 || x.dim() == 2, "[diag] expected a 1-D or 2-D tensor, got shape ",
              x.sizes());
  if (x.dim() == 2) return diagonal(x, k, 0, 1).clone();
  return diag_embed(x, k, 0, 1);
}

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  EMBER_OP(tensor_split, x, sections, dim);
  EMBER_CHECK_VALUE(sections > 0, "[tensor_split] number of sections must be larger than 0, got ",
                    sections);
  int64_t d = wrap_dim(dim, x.dim(), "tensor_split"), n = x.size(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = n / sections + (i < n % sections ? 1 : 0);
    out.push_back(x.narrow(d, start, len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split_at(const Tensor& x, const Shape& indices, int64_t dim) {
  EMBER_OP(tensor_split_at, x, indices, dim);
  int64_t d = wrap_dim(dim, x.dim(), "tensor_split"), n = x.size(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t end = i < indices.size() ? std::min(std::max<int64_t>(indices[i], start), n) : n;
    out.push_back(x.narrow(d, std::min(start, n), std::max<int64_t>(end - start, 0)));
    start = end;
  }
  return out;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, const std::string& indexing) {
  EMBER_OP(meshgrid, xs, indexing);
  EMBER_CHECK_VALUE(indexing == "ij" || indexing == "xy",
                    "[meshgrid] indexing must be 'ij' or 'xy', got '", indexing, "'");
  Shape shape;
  for (const Tensor& t : xs) {
    EMBER_CHECK(t.dim() <= 1, "[meshgrid] expected 0-D or 1-D tensors, got shape ", t.sizes());
    shape.push_back(t.numel());
  }
  bool swap = indexing == "xy" && xs.size() >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    size_t at = swap && i < 2 ? 1 - i : i;
    Shape view(shape.size(), 1);
    view[at] = xs[i].numel();
    out.push_back(xs[i].reshape(view).expand(shape));
  }
  return out;
}

}  // namespace ember
