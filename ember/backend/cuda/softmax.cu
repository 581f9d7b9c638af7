// CUDA softmax and log_softmax over one dim of a contiguous tensor seen as (outer, D, inner), and
// their backward: when inner == 1, a warp per row of up to 1024 elements (held in registers) or a
// block per longer row (passes over a row that stays in L1/L2, each warp reading consecutive
// elements); else a thread per (outer, inner) column (neighbouring threads, neighbouring columns).
#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "ember/backend/cuda/block_reduce.cuh"
#include "ember/backend/cuda/loops.cuh"
#include "ember/backend/functors/math.h"
#include "ember/backend/functors/reduce.h"
#include "ember/backend/kernels.h"
#include "ember/backend/reduce_layout.h"

namespace ember {
namespace {

constexpr int kBlock = 256;

// cuda::block_reduce's result, given to every thread through `shared`.
template <typename A, typename R>
__device__ A block_all_reduce(A v, R r, A* shared) {
  A total = cuda::block_reduce<A>(v, r);  // ends with a barrier
  if (threadIdx.x == 0) *shared = total;
  __syncthreads();
  A result = *shared;
  __syncthreads();  // before `shared` is written again
  return result;
}

// Rows of at most 32 * K elements (K up to 32: 1024) take a warp each, every lane keeping its K
// elements in registers, so that a row is read once and no block-wide barrier is needed (as
// PyTorch's softmax_warp_forward and _backward).
constexpr int kWarpBlock = 128;

template <typename T, int K>
__global__ void softmax_warp_rows(const T* x, T* y, int64_t rows, int64_t D, bool log) {
  using A = opmath_t<T>;
  const A neg_inf = -std::numeric_limits<A>::infinity();
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  // row is the same for the whole warp, so every lane takes part in each shuffle.
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       row < rows; row += warps) {
    const T* xr = x + row * D;
    T* yr = y + row * D;
    A v[K];
    A m = neg_inf;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = lane + 32 * k;
      v[k] = i < D ? static_cast<A>(xr[i]) : neg_inf;  // past the row: exp gives 0
      m = math::max(m, v[k]);
    }
    m = cuda::warp_all_reduce(m, MaxReducer<A>{});
    if (m == neg_inf) {  // all -inf: NaN like PyTorch
#pragma unroll
      for (int k = 0; k < K; ++k)
        if (lane + 32 * k < D)
          yr[lane + 32 * k] = static_cast<T>(std::numeric_limits<A>::quiet_NaN());
      continue;
    }
    A s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) s += math::exp(v[k] - m);
    s = cuda::warp_all_reduce(s, SumReducer<A>{});
    A lse = math::log(s), inv = A(1) / s;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = lane + 32 * k;
      if (i < D) yr[i] = static_cast<T>(log ? (v[k] - m) - lse : math::exp(v[k] - m) * inv);
    }
  }
}

template <typename T, int K>
__global__ void softmax_backward_warp_rows(const T* grad, const T* y, T* gi, int64_t rows,
                                           int64_t D, bool log) {
  using A = opmath_t<T>;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       row < rows; row += warps) {
    const T* gr = grad + row * D;
    const T* yr = y + row * D;
    T* out = gi + row * D;
    A gv[K], yv[K];
    A s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = lane + 32 * k;
      gv[k] = i < D ? static_cast<A>(gr[i]) : A(0);
      yv[k] = i < D ? static_cast<A>(yr[i]) : A(0);
      s += log ? gv[k] : gv[k] * yv[k];
    }
    s = cuda::warp_all_reduce(s, SumReducer<A>{});
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = lane + 32 * k;
      if (i < D) out[i] = static_cast<T>(log ? gv[k] - math::exp(yv[k]) * s : yv[k] * (gv[k] - s));
    }
  }
}

// Calls f(std::integral_constant<int, K>{}) for the smallest K of 1, 2, 4, ..., 32 with
// 32 * K >= D (D <= 1024).
template <typename F>
void with_elements_per_lane(int64_t D, F&& f) {
  if (D <= 32)
    f(std::integral_constant<int, 1>{});
  else if (D <= 64)
    f(std::integral_constant<int, 2>{});
  else if (D <= 128)
    f(std::integral_constant<int, 4>{});
  else if (D <= 256)
    f(std::integral_constant<int, 8>{});
  else if (D <= 512)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, 32>{});
}

template <typename T>
__global__ void softmax_rows(const T* x, T* y, int64_t rows, int64_t D, bool log) {
  using A = opmath_t<T>;
  __shared__ A shared;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * D;
    T* yr = y + row * D;
    A m = -std::numeric_limits<A>::infinity();
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) m = math::max(m, static_cast<A>(xr[i]));
    m = block_all_reduce(m, MaxReducer<A>{}, &shared);
    if (m == -std::numeric_limits<A>::infinity()) {  // all -inf: NaN like PyTorch
      for (int64_t i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = static_cast<T>(std::numeric_limits<A>::quiet_NaN());
      continue;
    }
    A s = 0;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) s += math::exp(static_cast<A>(xr[i]) - m);
    s = block_all_reduce(s, SumReducer<A>{}, &shared);
    if (log) {
      A lse = math::log(s);  // (x - m) - log(s): see softmax_row in backend/cpu/softmax.cpp
      for (int64_t i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = static_cast<T>((static_cast<A>(xr[i]) - m) - lse);
    } else {
      A inv = A(1) / s;
      for (int64_t i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = static_cast<T>(math::exp(static_cast<A>(xr[i]) - m) * inv);
    }
  }
}

template <typename T>
__global__ void softmax_columns(const T* x, T* y, DimSplit g, bool log) {
  using A = opmath_t<T>;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       c < g.outer * g.inner; c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o = c / g.inner, i = c % g.inner;
    const T* xc = x + o * g.D * g.inner + i;
    T* yc = y + o * g.D * g.inner + i;
    A m = -std::numeric_limits<A>::infinity();
    for (int64_t d = 0; d < g.D; ++d) m = math::max(m, static_cast<A>(xc[d * g.inner]));
    if (m == -std::numeric_limits<A>::infinity()) m = std::numeric_limits<A>::quiet_NaN();
    A s = 0;
    for (int64_t d = 0; d < g.D; ++d) s += math::exp(static_cast<A>(xc[d * g.inner]) - m);
    for (int64_t d = 0; d < g.D; ++d) {
      A v = static_cast<A>(xc[d * g.inner]) - m;
      yc[d * g.inner] = static_cast<T>(log ? v - math::log(s) : math::exp(v) / s);
    }
  }
}

// grad_in = y * (grad - sum(grad * y)) for softmax, grad - exp(y) * sum(grad) for log_softmax
// (y its output), a block per row.
template <typename T>
__global__ void softmax_backward_rows(const T* grad, const T* y, T* gi, int64_t rows, int64_t D,
                                      bool log) {
  using A = opmath_t<T>;
  __shared__ A shared;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* gr = grad + row * D;
    const T* yr = y + row * D;
    T* out = gi + row * D;
    A s = 0;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x)
      s += log ? static_cast<A>(gr[i]) : static_cast<A>(gr[i]) * static_cast<A>(yr[i]);
    s = block_all_reduce(s, SumReducer<A>{}, &shared);
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      A gv = static_cast<A>(gr[i]), yv = static_cast<A>(yr[i]);
      out[i] = static_cast<T>(log ? gv - math::exp(yv) * s : yv * (gv - s));
    }
  }
}

template <typename T>
__global__ void softmax_backward_columns(const T* grad, const T* y, T* gi, DimSplit g, bool log) {
  using A = opmath_t<T>;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       c < g.outer * g.inner; c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o = c / g.inner, i = c % g.inner, base = o * g.D * g.inner + i;
    A s = 0;
    for (int64_t d = 0; d < g.D; ++d) {
      int64_t k = base + d * g.inner;
      s += log ? static_cast<A>(grad[k]) : static_cast<A>(grad[k]) * static_cast<A>(y[k]);
    }
    for (int64_t d = 0; d < g.D; ++d) {
      int64_t k = base + d * g.inner;
      A gv = static_cast<A>(grad[k]), yv = static_cast<A>(y[k]);
      gi[k] = static_cast<T>(log ? gv - math::exp(yv) * s : yv * (gv - s));
    }
  }
}

}  // namespace

void softmax_cuda(const Tensor& x, int64_t dim, bool log, const Tensor& out) {
  if (x.numel() == 0) return;
  DimSplit g = split_at(x, dim);
  cuda::LaunchScope launch(x.device().index());
  cudaStream_t stream = launch.stream;
  dispatch_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(out.data_ptr());
    if (g.inner == 1 && g.D <= 1024) {
      with_elements_per_lane(g.D, [&](auto k) {
        softmax_warp_rows<T, decltype(k)::value>
            <<<cuda::grid_for(g.outer, kWarpBlock / 32), kWarpBlock, 0, stream>>>(xp, yp, g.outer,
                                                                                  g.D, log);
      });
    } else if (g.inner == 1) {
      softmax_rows<T><<<cuda::grid_for(g.outer, 1), kBlock, 0, stream>>>(xp, yp, g.outer, g.D, log);
    } else {
      softmax_columns<T>
          <<<cuda::grid_for(g.outer * g.inner, kBlock), kBlock, 0, stream>>>(xp, yp, g, log);
    }
    EMBER_CUDA_LAUNCH_CHECK("softmax");
  });
}

void softmax_backward_cuda(const Tensor& grad, const Tensor& out, int64_t dim, bool log,
                           const Tensor& grad_in) {
  if (out.numel() == 0) return;
  DimSplit g = split_at(out, dim);
  cuda::LaunchScope launch(out.device().index());
  dispatch_floating(out.dtype(), "softmax_backward", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    const T* gp = static_cast<const T*>(grad.data_ptr());
    const T* yp = static_cast<const T*>(out.data_ptr());
    T* gi = static_cast<T*>(grad_in.data_ptr());
    if (g.inner == 1 && g.D <= 1024) {
      with_elements_per_lane(g.D, [&](auto k) {
        softmax_backward_warp_rows<T, decltype(k)::value>
            <<<cuda::grid_for(g.outer, kWarpBlock / 32), kWarpBlock, 0, launch.stream>>>(
                gp, yp, gi, g.outer, g.D, log);
      });
    } else if (g.inner == 1) {
      softmax_backward_rows<T>
          <<<cuda::grid_for(g.outer, 1), kBlock, 0, launch.stream>>>(gp, yp, gi, g.outer, g.D, log);
    } else {
      softmax_backward_columns<T>
          <<<cuda::grid_for(g.outer * g.inner, kBlock), kBlock, 0, launch.stream>>>(gp, yp, gi, g,
                                                                                    log);
    }
    EMBER_CUDA_LAUNCH_CHECK("softmax_backward");
  });
}

}  // namespace ember
