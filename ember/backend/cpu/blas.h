// Matrix products on the CPU through OpenBLAS. OpenBLAS is held at one thread (its own spinning
// pool would fight ours for the cores, see backend/cpu/thread_pool.h); ember splits a product into
// blocks and runs them on its pool.
#pragma once

#include <cstdint>

#include "ember/core/complex.h"
#include "ember/core/half.h"

namespace ember::cpu {

/// C (m x n, row stride ldc) = alpha * op(A) op(B) + beta * C, row-major, split over the pool.
/// op(A) is m x k (A transposed when trans_a), op(B) is k x n.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
           int64_t ldc);

/// The same for bfloat16 operands and result (float32 accumulation) through oneDNN; only when
/// have_bf16_kernels() (bf16_kernels.h).
void bf16gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta,
              BFloat16* c, int64_t ldc);

/// The same for complex64 (T = float) and complex128 (T = double) through cgemm and zgemm.
template <typename T>
void complex_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, Complex<T> alpha,
                  const Complex<T>* a, int64_t lda, const Complex<T>* b, int64_t ldb,
                  Complex<T> beta, Complex<T>* c, int64_t ldc);

/// Makes sure OpenBLAS runs single-threaded (called before any BLAS use).
void init_blas();

}  // namespace ember::cpu
