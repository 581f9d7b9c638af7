// Views (metadata over the same storage) and the ops that join or split tensors.
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// A view with explicit geometry (no autograd): used by kernels and DataLoader collation.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);

}  // namespace ember
