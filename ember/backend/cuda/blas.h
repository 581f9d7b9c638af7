// Internal: row-major strided-batched GEMM on cuBLAS, shared by matmul and convolution.
#pragma once

#include <cstdint>

#include "ember/core/dtype.h"

namespace ember::cuda {

/// For each of `batch` problems on the current stream of `device`:
/// C (m x n, ldc) = alpha * op(A) op(B) + beta * C, row-major; op(A) is m x k (A transposed when
/// trans_a), op(B) is k x n. Strides are in elements; 0 reuses one matrix for every problem.
void gemm_strided_batched(int device, DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n,
                          int64_t k, double alpha, const void* a, int64_t lda, int64_t stride_a,
                          const void* b, int64_t ldb, int64_t stride_b, double beta, void* c,
                          int64_t ldc, int64_t stride_c, int64_t batch);

}  // namespace ember::cuda
