// Views (metadata over the same storage): the view methods are members of Tensor; as_strided is
// here. Joining tensors into a new one is in ops/join.h.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// A view with explicit geometry (no autograd): used by kernels and DataLoader collation.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);
/// Windows of `size` every `step` along dim, as a new last dim of that size (Tensor.unfold): a view.
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
/// The diagonal of dims (dim1, dim2) at `offset` (above the main one when positive), as a view:
/// those dims are removed and the diagonal is the last dim.
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
/// Dims `source` moved to positions `destination`, the others keeping their order.
Tensor movedim(const Tensor& t, const Shape& source, const Shape& destination);

}  // namespace ember
