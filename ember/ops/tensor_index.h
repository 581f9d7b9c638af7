// Subscripts as Python writes them, x[0, 1:3, None, ..., idx] (libtorch's Tensor::index):
// integers, slices, None and the ellipsis make views; integer and boolean tensors gather (a copy),
// with NumPy's rules for where the indexed dims go. The Python binding turns a subscript into a
// list of TensorIndex and calls these; C++ code can call them directly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// start:stop:step; an absent bound is the start or end of the dim.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}          // NOLINT
  TensorIndex(int i) : TensorIndex(static_cast<int64_t>(i)) {}           // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}                // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT
  /// x[True] adds a dim of size 1, x[False] one of size 0 (NumPy's rule).
  static TensorIndex boolean(bool b) {
    TensorIndex i(Kind::Boolean);
    i.integer_ = b;
    return i;
  }
  static TensorIndex none() { return TensorIndex(Kind::None); }
  static TensorIndex ellipsis() { return TensorIndex(Kind::Ellipsis); }

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  explicit TensorIndex(Kind k) : kind_(k) {}
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

/// x[indices]: a view when every index is an integer, slice, None, ellipsis or bool; otherwise a
/// new tensor (differentiable through index_select).
Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices);
/// x[indices] = value in place (value broadcast to the indexed shape). Boolean-tensor indices
/// (masks) and basic indices are supported; integer-tensor indices too, one per assignment.
Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value);
Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, Scalar value);

/// The indices (n, x.dim()) int64 of x's nonzero elements, in row-major order (synchronises: the
/// count decides the shape).
Tensor nonzero(const Tensor& x);
/// x's elements where mask (broadcast to x) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);

}  // namespace ember
