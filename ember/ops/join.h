// The ops that join tensors into a new one: cat along an existing dim, stack along a new one,
// repeat and tile of copies of one tensor.
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// Concatenates along `dim`; the result has the promoted dtype of all inputs (PyTorch's cat).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// Joins equal-shaped tensors along a new dim `dim`.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// Tensor.repeat: `t` copied repeats[i] times along dim i; repeats may have more dims than t (t
/// gains leading dims of 1), not fewer.
Tensor repeat(const Tensor& t, const Shape& repeats);
/// torch.tile: repeat, where fewer repeats than t's dims are padded with leading 1s.
Tensor tile(const Tensor& t, const Shape& dims);

}  // namespace ember
