// Internal: integer matrix products on CUDA (cuBLAS has none), for bmm_cuda.
#pragma once

#include "ember/core/tensor.h"

namespace ember::cuda {

/// out (B, M, N) = alpha * a (B, M, K) @ b (B, K, N) + beta * out for uint8, int32 and int64,
/// on the current stream of out's device: products and sums wrap around in the dtype's width,
/// bit for bit as the CPU's integer kernel (backend/cpu/blas.cpp). alpha and beta are truncated
/// to int64 as there; beta 0 does not read out. Any strides; K > 0.
void bmm_integer(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta);

}  // namespace ember::cuda
