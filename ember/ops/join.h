// The ops that join tensors into a new one: cat along an existing dim, stack along a new one.
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// Concatenates along `dim`; the result has the promoted dtype of all inputs (PyTorch's cat).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// Joins equal-shaped tensors along a new dim `dim`.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

}  // namespace ember
