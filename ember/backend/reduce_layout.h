// How both backends see a reduction: the input as [kept dims..., reduced dims...]. Rows whose
// reduced part is contiguous are reduced directly; "columns" (contiguous kept dims, reductions over
// leading dims) accumulate whole rows; anything else is first copied into the row layout.
#pragma once

#include "ember/backend/functors/reduce.h"
#include "ember/backend/tensor_iter.h"
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

/// What a backend reduces: `in` itself when its layout is rows, or columns for a plain reduction
/// (arg reductions and those with indices want rows); otherwise a row-layout copy of it made by the
/// backend's `copy` kernel.
struct ReduceInput {
  Tensor in;
  ReduceLayout layout;
};
ReduceInput reduce_input(ReduceOp op, const Tensor& in, const Shape& dims, bool with_indices,
                         void (*copy)(const TensorIter&));

/// What a reduction over no elements gives (ops/ rejects max/min/arg of an empty tensor).
inline double reduce_identity(ReduceOp op) {
  return op == ReduceOp::Prod || op == ReduceOp::All ? 1 : 0;
}

/// A contiguous tensor seen as (outer, D, inner) around `dim`: how softmax-like ops that reduce
/// one dim and write every element walk it.
struct DimSplit {
  int64_t outer = 1, D = 1, inner = 1;
};
DimSplit split_at(const Tensor& t, int64_t dim);

/// `in` as a view with the kept dims first and the reduced dims last (copy it to get rows).
Tensor rows_view(const Tensor& in, const Shape& dims);

/// The dims of rows_view()'s result that are reduced: its last dims.size() dims.
Shape trailing_dims(int64_t ndim, size_t count);

}  // namespace ember
