// resize_ and resize_as_: a tensor's shape changed in place, its storage grown (and shared with
// every view of it) when the new shape needs more memory, as PyTorch's.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// Gives self the contiguous shape `sizes`, keeping its storage offset and the values that fit;
/// the storage grows in place when it is too small (new elements are uninitialised).
Tensor& resize_(Tensor& self, const Shape& sizes);
/// resize_(self, other's shape).
Tensor& resize_as_(Tensor& self, const Tensor& other);

}  // namespace ember
