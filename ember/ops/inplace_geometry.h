// Ops that change a tensor's own shape in place: resize_ (growing its storage when needed), the
// in-place views (x.unsqueeze_(0) makes x what x.unsqueeze(0) would be, history included), and
// set_ (x takes another tensor's storage and geometry), as PyTorch's.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// Gives self the contiguous shape `sizes`, keeping its storage offset and the values that fit;
/// the storage grows in place when it is too small (new elements are uninitialised).
Tensor& resize_(Tensor& self, const Shape& sizes);
/// resize_(self, other's shape).
Tensor& resize_as_(Tensor& self, const Tensor& other);

/// self becomes `view` (a view of self made by the op named `op`): its sizes, strides, offset
/// and, under autograd, its history. The in-place view ops are this over their view.
Tensor& become_view(Tensor& self, const Tensor& view, const char* op);
Tensor& squeeze_(Tensor& self, std::optional<int64_t> dim = std::nullopt);
Tensor& unsqueeze_(Tensor& self, int64_t dim);
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1);
Tensor& t_(Tensor& self);
Tensor& as_strided_(Tensor& self, const Shape& sizes, const Shape& strides,
                    std::optional<int64_t> offset = std::nullopt);

/// self shares source's storage, sizes, strides and offset (not its history).
Tensor& set_(Tensor& self, const Tensor& source);

}  // namespace ember
