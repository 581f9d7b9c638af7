// How a (batch, rows, cols) operand is handed to a BLAS, for both backends: row-major (as is) or
// column-major (transposed), with its leading dimension and batch stride; other layouts are copied.
#pragma once

#include <algorithm>

#include "ember/core/tensor.h"

namespace ember {

struct MatrixOperand {
  Tensor t;            // (B, rows, cols), possibly a contiguous copy
  bool trans = false;  // column-major storage
  int64_t ld = 0;      // leading dimension
  int64_t batch_stride = 0;
};

inline MatrixOperand blas_operand(const Tensor& t) {
  int64_t rows = t.size(1), cols = t.size(2);
  int64_t rs = t.stride(1), cs = t.stride(2);
  if (cs == 1 && (rs >= std::max<int64_t>(cols, 1) || rows == 1))
    return {t, false, std::max(rs, cols), t.stride(0)};
  if (rs == 1 && (cs >= std::max<int64_t>(rows, 1) || cols == 1))
    return {t, true, std::max(cs, rows), t.stride(0)};
  Tensor c = t.contiguous();
  return {c, false, std::max<int64_t>(cols, 1), c.stride(0)};
}

}  // namespace ember
