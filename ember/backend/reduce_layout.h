// How both backends see a reduction: the input as [kept dims..., reduced dims...]. Rows whose
// reduced part is contiguous are reduced directly; "columns" (contiguous kept dims, reductions over
// leading dims) accumulate whole rows; anything else is first copied into the row layout.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

struct ReduceLayout {
  Shape kept_sizes, kept_strides, red_sizes, red_strides;  // elements
  int64_t M = 1, N = 1;                                    // outputs, elements reduced into each
  /// Each output's elements are contiguous (a row).
  bool rows() const { return is_contiguous_layout(red_sizes, red_strides); }
  /// The kept dims are contiguous: out[m] reduces x[off(n) + m] over n.
  bool columns() const { return M > 1 && is_contiguous_layout(kept_sizes, kept_strides); }
};

ReduceLayout reduce_layout(const Tensor& in, const Shape& dims);

/// `in` as a view with the kept dims first and the reduced dims last (copy it to get rows).
Tensor rows_view(const Tensor& in, const Shape& dims);

/// The dims of rows_view()'s result that are reduced: its last dims.size() dims.
Shape trailing_dims(int64_t ndim, size_t count);

}  // namespace ember
