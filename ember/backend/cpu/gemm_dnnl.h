// bfloat16 matrix products through oneDNN's matmul primitive, which uses the CPU's bfloat16
// dot-product instructions (AVX512-BF16, AMX) and accumulates in float32, as libtorch does for
// CPU autocast. Called single-threaded from ember's pool (blas.cpp splits the product).
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

}  // namespace ember::cpu
