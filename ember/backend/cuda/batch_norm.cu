// CUDA batch norm over x viewed as (N, C, S), with the math of backend/functors/batch_norm.h.
// The per-channel sums split each channel's N * S elements over several blocks (a block per
// channel left most of the GPU idle: 64 blocks for ResNet's first stage, 6.3x PyTorch's time on
// an H200), each reading its share plane by plane, then merge the blocks' partial sums in a fixed
// order (deterministic). The statistics take two passes (the mean, then the squared deviations);
// the backward's sum_dy and sum_dy_xmu one. The elementwise passes take a thread per element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ember/backend/batch_norm_layout.h"
#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/batch_norm.h"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

constexpr int kBlock = 256;
// The sums' grid: about this many blocks in all (8 of 256 threads on each of an H100's or H200's
// 132 multiprocessors), each summing at least kMinPerBlock elements.
constexpr int64_t kTargetBlocks = 1024, kMinPerBlock = 4096;

// Integer division is emulated on the GPU, 64-bit several times slower than 32-bit: `narrow`
// (every index fits 32 bits) takes the 32-bit one.
__device__ inline int64_t div_index(int64_t a, int64_t b, bool narrow) {
  return narrow ? static_cast<uint32_t>(a) / static_cast<uint32_t>(b) : a / b;
}

// An optional per-channel value (undefined tensor: the fallback).
template <typename A>
__device__ inline A channel(const A* p, int64_t c, A fallback) {
  return p ? p[c] : fallback;
}

template <typename A>
const A* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const A*>(t.data_ptr()) : nullptr;
}

// The element i of channel c's N * S elements.
__device__ inline int64_t channel_offset(const BatchNormLayout& d, int64_t c, int64_t i,
                                         bool narrow) {
  int64_t n = div_index(i, d.S, narrow);
  return (n * d.C + c) * d.S + (i - n * d.S);
}

// The channel of element k of x.
__device__ inline int64_t channel_of(const BatchNormLayout& d, int64_t k, bool narrow) {
  int64_t plane = div_index(k, d.S, narrow);
  return plane - div_index(plane, d.C, narrow) * d.C;
}

// Calls f(offset of x) for block blockIdx.x's share of channel c's elements, its threads taking
// consecutive elements: plane by plane where the planes are at least a block wide (no division
// per element), else through channel_offset.
template <typename F>
__device__ void for_share(const BatchNormLayout& d, int64_t c, int64_t per_block, bool narrow,
                          F&& f) {
  const int64_t count = d.N * d.S;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * per_block;
  const int64_t end = begin + per_block < count ? begin + per_block : count;
  if (begin >= end) return;
  if (d.S >= blockDim.x) {
    int64_t n = begin / d.S, s0 = begin - n * d.S;
    for (int64_t i = begin; i < end; ++n, s0 = 0) {
      int64_t run = d.S - s0 < end - i ? d.S - s0 : end - i;
      int64_t base = (n * d.C + c) * d.S + s0;
      for (int64_t s = threadIdx.x; s < run; s += blockDim.x) f(base + s);
      i += run;
    }
  } else {
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      f(channel_offset(d, c, i, narrow));
  }
}

// The sum of v over the block, in every thread.
template <typename A>
__device__ A block_sum_all(A v, A* shared) {
  A total = cuda::block_reduce<A>(v, SumReducer<A>());  // ends with a barrier
  if (threadIdx.x == 0) *shared = total;
  __syncthreads();
  A result = *shared;
  __syncthreads();  // before `shared` is written again
  return result;
}

// How the sums split the channels: grid (P, C), each block per_block elements of its channel.
struct SumGrid {
  int64_t P, per_block;
  bool narrow;
  dim3 grid;
};

SumGrid sum_grid(const BatchNormLayout& d) {
  const int64_t count = d.N * d.S;
  int64_t P = std::min((kTargetBlocks + d.C - 1) / d.C, (count + kMinPerBlock - 1) / kMinPerBlock);
  P = std::max<int64_t>(1, std::min<int64_t>(P, 1024));
  SumGrid g;
  g.per_block = std::max<int64_t>(1, (count + P - 1) / P);
  g.P = std::max<int64_t>(1, (count + g.per_block - 1) / g.per_block);
  g.narrow = d.N * d.C * d.S <= static_cast<int64_t>(UINT32_MAX);
  g.grid = dim3(static_cast<unsigned>(g.P),
                static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(d.C, 1), 65535)));
  return g;
}

// partial[c * P + p] = the sum of x over block p's share of channel c.
template <typename T, typename A>
__global__ void sum_partials_kernel(const T* x, BatchNormLayout d, SumGrid g, A* partial) {
  for (int64_t c = blockIdx.y; c < d.C; c += gridDim.y) {
    A acc = 0;
    for_share(d, c, g.per_block, g.narrow, [&](int64_t off) { acc += static_cast<A>(x[off]); });
    acc = cuda::block_reduce<A>(acc, SumReducer<A>());
    if (threadIdx.x == 0) partial[c * g.P + blockIdx.x] = acc;
  }
}

// From the partial sums: mean[c] (block 0), and partial_sq[c * P + p] = the sum of (x - mean)^2
// over block p's share.
template <typename T, typename A>
__global__ void squares_partials_kernel(const T* x, BatchNormLayout d, SumGrid g,
                                        const A* partial, A* mean, A* partial_sq) {
  __shared__ A shared;
  const A count = static_cast<A>(d.N * d.S);
  for (int64_t c = blockIdx.y; c < d.C; c += gridDim.y) {
    A sum = 0;
    for (int64_t p = threadIdx.x; p < g.P; p += blockDim.x) sum += partial[c * g.P + p];
    A m = block_sum_all(sum, &shared) / count;
    if (blockIdx.x == 0 && threadIdx.x == 0) mean[c] = m;
    A sq = 0;
    for_share(d, c, g.per_block, g.narrow, [&](int64_t off) {
      A v = static_cast<A>(x[off]) - m;
      sq += v * v;
    });
    sq = cuda::block_reduce<A>(sq, SumReducer<A>());
    if (threadIdx.x == 0) partial_sq[c * g.P + blockIdx.x] = sq;
  }
}

// out[c] = scale * the sum of the P partials of channel c (a thread per channel, in order).
template <typename A>
__global__ void merge_partials_kernel(const A* partial, int64_t C, int64_t P, A scale, A* out) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  A acc = 0;
  for (int64_t p = 0; p < P; ++p) acc += partial[c * P + p];
  out[c] = acc * scale;
}

template <typename T, typename A>
__global__ void elemt_kernel(const T* x, BatchNormLayout d, bool narrow, const A* mean,
                             const A* invstd, const A* weight, const A* bias, T* out) {
  int64_t total = d.N * d.C * d.S;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = channel_of(d, k, narrow);
    BatchNormForward<A> f(channel(mean, c, A(0)), channel(invstd, c, A(1)),
                          channel(weight, c, A(1)), channel(bias, c, A(0)));
    out[k] = static_cast<T>(f(static_cast<A>(x[k])));
  }
}

// partial_dy and partial_dx [c * P + p]: the sums of dy and dy * (x - mean) over block p's share.
template <typename T, typename A>
__global__ void backward_partials_kernel(const T* grad_out, const T* x, BatchNormLayout d,
                                         SumGrid g, const A* mean, A* partial_dy, A* partial_dx) {
  for (int64_t c = blockIdx.y; c < d.C; c += gridDim.y) {
    A m = mean[c], dy_acc = 0, dx_acc = 0;
    for_share(d, c, g.per_block, g.narrow, [&](int64_t off) {
      A dy = static_cast<A>(grad_out[off]);
      dy_acc += dy;
      dx_acc += dy * (static_cast<A>(x[off]) - m);
    });
    dy_acc = cuda::block_reduce<A>(dy_acc, SumReducer<A>());
    dx_acc = cuda::block_reduce<A>(dx_acc, SumReducer<A>());
    if (threadIdx.x == 0) {
      partial_dy[c * g.P + blockIdx.x] = dy_acc;
      partial_dx[c * g.P + blockIdx.x] = dx_acc;
    }
  }
}

template <typename T, typename A>
__global__ void backward_elemt_kernel(const T* grad_out, const T* x, BatchNormLayout d,
                                      bool narrow, const A* mean, const A* invstd,
                                      const A* weight, const A* sum_dy, const A* sum_dy_xmu,
                                      A count, T* grad_in) {
  int64_t total = d.N * d.C * d.S;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = channel_of(d, k, narrow);
    BatchNormBackward<A> f(channel(mean, c, A(0)), channel(invstd, c, A(1)),
                           channel(weight, c, A(1)), channel(sum_dy, c, A(0)),
                           channel(sum_dy_xmu, c, A(0)), count);
    grad_in[k] = static_cast<T>(f(static_cast<A>(grad_out[k]), static_cast<A>(x[k])));
  }
}

unsigned merge_grid(int64_t C) { return static_cast<unsigned>((C + kBlock - 1) / kBlock); }

}  // namespace

void batch_norm_stats_cuda(const Tensor& x, const Tensor& mean, const Tensor& var) {
  BatchNormLayout d = batch_norm_layout(x);
  if (d.C == 0) return;
  SumGrid g = sum_grid(d);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_stats", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    Tensor partial = empty({2, d.C, g.P}, mean.options());
    A* sums = static_cast<A*>(partial.data_ptr());
    A* squares = sums + d.C * g.P;
    const T* xp = static_cast<const T*>(x.data_ptr());
    sum_partials_kernel<T, A><<<g.grid, kBlock, 0, launch.stream>>>(xp, d, g, sums);
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_stats (sums)");
    squares_partials_kernel<T, A><<<g.grid, kBlock, 0, launch.stream>>>(
        xp, d, g, sums, static_cast<A*>(mean.data_ptr()), squares);
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_stats (squares)");
    merge_partials_kernel<A><<<merge_grid(d.C), kBlock, 0, launch.stream>>>(
        squares, d.C, g.P, A(1) / static_cast<A>(d.N * d.S), static_cast<A*>(var.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_stats (merge)");
  });
}

void batch_norm_elemt_cuda(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                           const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.numel() == 0) return;
  BatchNormLayout d = batch_norm_layout(x);
  bool narrow = x.numel() <= static_cast<int64_t>(UINT32_MAX);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    elemt_kernel<T, A><<<cuda::grid_for(x.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), d, narrow, ptr_or_null<A>(mean),
        ptr_or_null<A>(invstd), ptr_or_null<A>(weight), ptr_or_null<A>(bias),
        static_cast<T*>(out.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_elemt");
  });
}

void batch_norm_backward_reduce_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                     const Tensor& sum_dy, const Tensor& sum_dy_xmu) {
  BatchNormLayout d = batch_norm_layout(x);
  if (d.C == 0) return;
  SumGrid g = sum_grid(d);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_reduce", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    Tensor partial = empty({2, d.C, g.P}, sum_dy.options());
    A* dy = static_cast<A*>(partial.data_ptr());
    A* dx = dy + d.C * g.P;
    backward_partials_kernel<T, A><<<g.grid, kBlock, 0, launch.stream>>>(
        static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(x.data_ptr()), d, g,
        static_cast<const A*>(mean.data_ptr()), dy, dx);
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_backward_reduce");
    merge_partials_kernel<A><<<merge_grid(d.C), kBlock, 0, launch.stream>>>(
        dy, d.C, g.P, A(1), static_cast<A*>(sum_dy.data_ptr()));
    merge_partials_kernel<A><<<merge_grid(d.C), kBlock, 0, launch.stream>>>(
        dx, d.C, g.P, A(1), static_cast<A*>(sum_dy_xmu.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_backward_reduce (merge)");
  });
}

void batch_norm_backward_elemt_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                    const Tensor& invstd, const Tensor& weight,
                                    const Tensor& sum_dy, const Tensor& sum_dy_xmu, double count,
                                    const Tensor& grad_in) {
  if (x.numel() == 0) return;
  BatchNormLayout d = batch_norm_layout(x);
  bool narrow = x.numel() <= static_cast<int64_t>(UINT32_MAX);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    backward_elemt_kernel<T, A><<<cuda::grid_for(x.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(x.data_ptr()), d,
        narrow, ptr_or_null<A>(mean), ptr_or_null<A>(invstd), ptr_or_null<A>(weight),
        ptr_or_null<A>(sum_dy), ptr_or_null<A>(sum_dy_xmu), static_cast<A>(count),
        static_cast<T*>(grad_in.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_backward_elemt");
  });
}

}  // namespace ember
