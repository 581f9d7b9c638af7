// Views (metadata over the same storage): the view methods are members of Tensor; as_strided is
// here. Joining tensors into a new one is in ops/join.h.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// A view with explicit geometry (no autograd): used by kernels and DataLoader collation.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);

}  // namespace ember
