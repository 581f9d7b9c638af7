// CUDA batch norm over x viewed as (N, C, S): a block per channel for the sums (statistics in two
// passes; the backward's sum_dy and sum_dy_xmu in one), a thread per element for the elementwise
// passes, with the math of backend/functors/batch_norm.h.
#include <cuda_runtime.h>

#include <algorithm>

#include "ember/backend/batch_norm_layout.h"
#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/batch_norm.h"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/kernels.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

// The element i of channel c's N * S elements.
__device__ inline int64_t channel_offset(const BatchNormLayout& d, int64_t c, int64_t i) {
  return (i / d.S * d.C + c) * d.S + i % d.S;
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

template <typename T, typename A>
__global__ void stats_kernel(const T* x, BatchNormLayout d, A* mean, A* var) {
  __shared__ A channel_mean;
  int64_t count = d.N * d.S;
  for (int64_t c = blockIdx.x; c < d.C; c += gridDim.x) {
    A acc = 0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
      acc += static_cast<A>(x[channel_offset(d, c, i)]);
    acc = cuda::block_reduce<A>(acc, SumReducer<A>());
    if (threadIdx.x == 0) channel_mean = acc / static_cast<A>(count);
    __syncthreads();
    A m = channel_mean, sq = 0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      A v = static_cast<A>(x[channel_offset(d, c, i)]) - m;
      sq += v * v;
    }
    sq = cuda::block_reduce<A>(sq, SumReducer<A>());
    if (threadIdx.x == 0) {
      mean[c] = m;
      var[c] = sq / static_cast<A>(count);
    }
    __syncthreads();  // channel_mean is rewritten for the next channel
  }
}

template <typename T, typename A>
__global__ void elemt_kernel(const T* x, BatchNormLayout d, const A* mean, const A* invstd,
                             const A* weight, const A* bias, T* out) {
  int64_t total = d.N * d.C * d.S;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = k / d.S % d.C;
    BatchNormForward<A> f(channel(mean, c, A(0)), channel(invstd, c, A(1)),
                          channel(weight, c, A(1)), channel(bias, c, A(0)));
    out[k] = static_cast<T>(f(static_cast<A>(x[k])));
  }
}

template <typename T, typename A>
__global__ void backward_reduce_kernel(const T* grad_out, const T* x, BatchNormLayout d,
                                       const A* mean, A* sum_dy, A* sum_dy_xmu) {
  int64_t count = d.N * d.S;
  for (int64_t c = blockIdx.x; c < d.C; c += gridDim.x) {
    A m = mean[c], dy_acc = 0, dx_acc = 0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      int64_t off = channel_offset(d, c, i);
      A dy = static_cast<A>(grad_out[off]);
      dy_acc += dy;
      dx_acc += dy * (static_cast<A>(x[off]) - m);
    }
    dy_acc = cuda::block_reduce<A>(dy_acc, SumReducer<A>());
    dx_acc = cuda::block_reduce<A>(dx_acc, SumReducer<A>());
    if (threadIdx.x == 0) {
      sum_dy[c] = dy_acc;
      sum_dy_xmu[c] = dx_acc;
    }
  }
}

template <typename T, typename A>
__global__ void backward_elemt_kernel(const T* grad_out, const T* x, BatchNormLayout d,
                                      const A* mean, const A* invstd, const A* weight,
                                      const A* sum_dy, const A* sum_dy_xmu, A count, T* grad_in) {
  int64_t total = d.N * d.C * d.S;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = k / d.S % d.C;
    BatchNormBackward<A> f(channel(mean, c, A(0)), channel(invstd, c, A(1)),
                           channel(weight, c, A(1)), channel(sum_dy, c, A(0)),
                           channel(sum_dy_xmu, c, A(0)), count);
    grad_in[k] = static_cast<T>(f(static_cast<A>(grad_out[k]), static_cast<A>(x[k])));
  }
}

unsigned channel_grid(int64_t C) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(C, 1), 65535));
}

}  // namespace

void batch_norm_stats_cuda(const Tensor& x, const Tensor& mean, const Tensor& var) {
  BatchNormLayout d = batch_norm_layout(x);
  if (d.C == 0) return;
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_stats", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    stats_kernel<T, A><<<channel_grid(d.C), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), d, static_cast<A*>(mean.data_ptr()),
        static_cast<A*>(var.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_stats");
  });
}

void batch_norm_elemt_cuda(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                           const Tensor& weight, const Tensor& bias, const Tensor& out) {
  if (x.numel() == 0) return;
  BatchNormLayout d = batch_norm_layout(x);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    elemt_kernel<T, A><<<cuda::grid_for(x.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(x.data_ptr()), d, ptr_or_null<A>(mean), ptr_or_null<A>(invstd),
        ptr_or_null<A>(weight), ptr_or_null<A>(bias), static_cast<T*>(out.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_elemt");
  });
}

void batch_norm_backward_reduce_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                     const Tensor& sum_dy, const Tensor& sum_dy_xmu) {
  BatchNormLayout d = batch_norm_layout(x);
  if (d.C == 0) return;
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_reduce", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    backward_reduce_kernel<T, A><<<channel_grid(d.C), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(x.data_ptr()), d,
        static_cast<const A*>(mean.data_ptr()), static_cast<A*>(sum_dy.data_ptr()),
        static_cast<A*>(sum_dy_xmu.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_backward_reduce");
  });
}

void batch_norm_backward_elemt_cuda(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                    const Tensor& invstd, const Tensor& weight,
                                    const Tensor& sum_dy, const Tensor& sum_dy_xmu, double count,
                                    const Tensor& grad_in) {
  if (x.numel() == 0) return;
  BatchNormLayout d = batch_norm_layout(x);
  cuda::LaunchScope launch(x.device().index());
  dispatch_batch_norm(x.dtype(), "batch_norm_backward_elemt", [&](auto tag, auto acc_tag) {
    using T = EMBER_TYPE(tag);
    using A = EMBER_TYPE(acc_tag);
    backward_elemt_kernel<T, A><<<cuda::grid_for(x.numel(), kBlock), kBlock, 0, launch.stream>>>(
        static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(x.data_ptr()), d,
        ptr_or_null<A>(mean), ptr_or_null<A>(invstd), ptr_or_null<A>(weight),
        ptr_or_null<A>(sum_dy), ptr_or_null<A>(sum_dy_xmu), static_cast<A>(count),
        static_cast<T*>(grad_in.data_ptr()));
    EMBER_CUDA_LAUNCH_CHECK("batch_norm_backward_elemt");
  });
}

}  // namespace ember
