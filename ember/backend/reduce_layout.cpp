#include "ember/backend/reduce_layout.h"

#include <vector>

namespace ember {

ReduceLayout reduce_layout(const Tensor& in, const Shape& dims) {
  ReduceLayout l;
  std::vector<bool> reduced(static_cast<size_t>(in.dim()), false);
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
  for (int64_t d = 0; d < in.dim(); ++d) {
    auto du = static_cast<size_t>(d);
    if (reduced[du]) {
      l.red_sizes.push_back(in.sizes()[du]);
      l.red_strides.push_back(in.strides()[du]);
      l.N *= in.sizes()[du];
    } else {
      l.kept_sizes.push_back(in.sizes()[du]);
      l.kept_strides.push_back(in.strides()[du]);
      l.M *= in.sizes()[du];
    }
  }
  return l;
}

Tensor rows_view(const Tensor& in, const Shape& dims) {
  std::vector<bool> reduced(static_cast<size_t>(in.dim()), false);
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
  Shape perm;
  for (int64_t d = 0; d < in.dim(); ++d)
    if (!reduced[static_cast<size_t>(d)]) perm.push_back(d);
  for (int64_t d : dims) perm.push_back(d);
  Shape sizes, strides;
  for (int64_t d : perm) {
    sizes.push_back(in.sizes()[static_cast<size_t>(d)]);
    strides.push_back(in.strides()[static_cast<size_t>(d)]);
  }
  return Tensor(std::make_shared<TensorImpl>(in.storage(), sizes, strides, in.storage_offset(),
                                             in.dtype(), in.device()));
}

ReduceInput reduce_input(ReduceOp op, const Tensor& in, const Shape& dims, bool with_indices,
                         void (*copy)(const TensorIter&)) {
  ReduceLayout l = reduce_layout(in, dims);
  bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin || with_indices;
  if (l.rows() || (!arg && l.columns())) return {in, std::move(l)};
  Tensor view = rows_view(in, dims);
  Tensor packed = empty(view.sizes(), in.options());
  copy(TensorIter(packed, {view}));
  return {packed, reduce_layout(packed, trailing_dims(in.dim(), dims.size()))};
}

DimSplit split_at(const Tensor& t, int64_t dim) {
  DimSplit g;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < dim)
      g.outer *= t.size(d);
    else if (d == dim)
      g.D = t.size(d);
    else
      g.inner *= t.size(d);
  }
  return g;
}

Shape trailing_dims(int64_t ndim, size_t count) {
  Shape out;
  for (size_t i = 0; i < count; ++i)
    out.push_back(ndim - static_cast<int64_t>(count) + static_cast<int64_t>(i));
  return out;
}

}  // namespace ember
