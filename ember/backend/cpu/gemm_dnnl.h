// Matrix products through oneDNN's matmul primitive: bfloat16 with the CPU's bfloat16 dot-product
// instructions (AVX512-BF16, AMX), accumulated in float32 as libtorch does for CPU autocast; and
// float32, where oneDNN's kernels run 5-15% faster than OpenBLAS 0.3.21's on AVX-512 cores (a GPT
// layer's products: 105-109 against 92-99 GFLOPS on one Zen 4 core). Called single-threaded from
// ember's pool (blas.cpp splits the product).
#pragma once

#include <cstdint>

#include "ember/core/half.h"

namespace ember::cpu {

/// Only when have_bf16_kernels() (bf16_kernels.h).
/// C (m x n, row stride ldc) = alpha * op(A) op(B) + beta * C, row-major bfloat16 operands and
/// result, float32 accumulation; op(A) is m x k (A transposed when trans_a), op(B) is k x n.
void dnnl_bf16_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta,
                    BFloat16* c, int64_t ldc);

/// Whether ember was built with oneDNN (else dnnl_sgemm fails).
bool have_dnnl_sgemm();
/// The same in float32.
void dnnl_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                int64_t ldc);

}  // namespace ember::cpu
