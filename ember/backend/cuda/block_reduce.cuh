// Warp- and block-wide reductions for CUDA kernels (warp shuffles, then shared memory), shared by
// the reductions, softmax, the batch-norm statistics and the conv bias gradient.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace ember::cuda {

template <typename A>
__device__ A shfl_down(A v, int offset) {
  if constexpr (std::is_same_v<A, bool>)
    return __shfl_down_sync(0xffffffffu, static_cast<int>(v), offset) != 0;
  else
    return __shfl_down_sync(0xffffffffu, v, offset);
}

/// Reduces one value per lane across the warp with r; every lane gets the result. Every lane of
/// the warp must call it.
template <typename A, typename R>
__device__ A warp_all_reduce(A v, R r) {
  for (int o = 16; o > 0; o /= 2) v = r(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Reduces one value per thread across the block (at most 1024 threads, a multiple of 32) with
/// the reducer r (R::identity() and r(a, b)); the result is valid in thread 0. Every thread of the
/// block must call it.
template <typename A, typename R>
__device__ A block_reduce(A v, R r) {
  __shared__ A warp_results[32];
  for (int o = 16; o > 0; o /= 2) v = r(v, shfl_down(v, o));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? warp_results[lane] : R::identity();
    for (int o = 16; o > 0; o /= 2) v = r(v, shfl_down(v, o));
  }
  __syncthreads();
  return v;
}

}  // namespace ember::cuda
