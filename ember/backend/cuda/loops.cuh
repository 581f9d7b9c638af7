// The CUDA elementwise kernels, generic over the same functors as the CPU loop
// (backend/functors/). Contiguous operands with 16-byte aligned data take vectorised loads and
// stores; anything else indexes through the TensorIter's strides. Shapes: any, up to 16 dims.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include "ember/backend/cuda/runtime.h"
#include "ember/backend/tensor_iter.h"
#include "ember/core/dtype.h"

namespace ember::cuda {

constexpr int kThreads = 256;

/// Byte offsets of every operand for a linear index, from the iterator's sizes and strides.
template <int N>
struct OffsetCalculator {
  int ndim;
  int64_t sizes[TensorIter::kMaxDims];
  int64_t strides[N][TensorIter::kMaxDims];

  explicit OffsetCalculator(const TensorIter& it) : ndim(it.ndim) {
    for (int d = 0; d < it.ndim; ++d) {
      sizes[d] = it.sizes[d];
      for (int k = 0; k < N; ++k) strides[k][d] = it.strides[k][d];
    }
  }
  __device__ void offsets(int64_t linear, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      int64_t i = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) out[k] += i * strides[k][d];
    }
  }
};

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <typename... Ts>
constexpr int max_size() {
  int m = 1;
  ((m = m > static_cast<int>(sizeof(Ts)) ? m : static_cast<int>(sizeof(Ts))), ...);
  return m;
}

template <int N>
struct Pointers {
  char* p[N];
};

// Contiguous, 16-byte aligned operands: V elements per thread with one vector load or store per
// operand. One kernel per arity keeps the loads explicit. Shapes: every operand (n).
template <int V, typename Out, typename F>
__global__ void vectorized0(int64_t n, F f, Out* out) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x,
          first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n / V; i += stride) {
    Vec<Out, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = static_cast<Out>(f());
    reinterpret_cast<Vec<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += stride) out[i] = static_cast<Out>(f());
}

template <int V, typename Out, typename A, typename F>
__global__ void vectorized1(int64_t n, F f, Out* out, const A* a) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x,
          first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n / V; i += stride) {
    Vec<A, V> va = reinterpret_cast<const Vec<A, V>*>(a)[i];
    Vec<Out, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = static_cast<Out>(f(static_cast<opmath_t<A>>(va.v[j])));
    reinterpret_cast<Vec<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += stride)
    out[i] = static_cast<Out>(f(static_cast<opmath_t<A>>(a[i])));
}

template <int V, typename Out, typename A, typename B, typename F>
__global__ void vectorized2(int64_t n, F f, Out* out, const A* a, const B* b) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x,
          first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n / V; i += stride) {
    Vec<A, V> va = reinterpret_cast<const Vec<A, V>*>(a)[i];
    Vec<B, V> vb = reinterpret_cast<const Vec<B, V>*>(b)[i];
    Vec<Out, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] =
          static_cast<Out>(f(static_cast<opmath_t<A>>(va.v[j]), static_cast<opmath_t<B>>(vb.v[j])));
    reinterpret_cast<Vec<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += stride)
    out[i] = static_cast<Out>(f(static_cast<opmath_t<A>>(a[i]), static_cast<opmath_t<B>>(b[i])));
}

template <int V, typename Out, typename A, typename B, typename C, typename F>
__global__ void vectorized3(int64_t n, F f, Out* out, const A* a, const B* b, const C* c) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x,
          first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n / V; i += stride) {
    Vec<A, V> va = reinterpret_cast<const Vec<A, V>*>(a)[i];
    Vec<B, V> vb = reinterpret_cast<const Vec<B, V>*>(b)[i];
    Vec<C, V> vc = reinterpret_cast<const Vec<C, V>*>(c)[i];
    Vec<Out, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] =
          static_cast<Out>(f(static_cast<opmath_t<A>>(va.v[j]), static_cast<opmath_t<B>>(vb.v[j]),
                             static_cast<opmath_t<C>>(vc.v[j])));
    reinterpret_cast<Vec<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += stride)
    out[i] = static_cast<Out>(f(static_cast<opmath_t<A>>(a[i]), static_cast<opmath_t<B>>(b[i]),
                                static_cast<opmath_t<C>>(c[i])));
}

template <typename Out, typename... In, typename F, size_t... I>
__device__ void apply_strided(char* const* data, const int64_t* off, const F& f,
                              std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(data[0] + off[0]) = static_cast<Out>(
      f(static_cast<opmath_t<In>>(*reinterpret_cast<const In*>(data[I + 1] + off[I + 1]))...));
}

// Any layout: offsets from the linear index through the iterator's sizes and strides.
template <typename Out, typename F, typename... In>
__global__ void strided_kernel(int64_t n, F f, OffsetCalculator<sizeof...(In) + 1> calc,
                               Pointers<sizeof...(In) + 1> data) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[sizeof...(In) + 1];
    calc.offsets(i, off);
    apply_strided<Out, In...>(data.p, off, f, std::index_sequence_for<In...>{});
  }
}

inline unsigned grid_for(int64_t work, int64_t per_block) {
  int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535 * 8)));
}

/// out = f(in...) over the iterator, on the current stream of its device. f takes and returns
/// opmath values (float for the 16-bit types), exactly as on the CPU.
template <typename Out, typename... In, typename F>
void gpu_kernel(const TensorIter& it, const F& f) {
  static_assert(sizeof...(In) <= 3, "gpu_kernel handles up to three inputs");
  if (it.numel == 0) return;
  LaunchScope launch(it.device.index());
  cudaStream_t stream = launch.stream;
  constexpr int kN = sizeof...(In) + 1;
  bool aligned = true;
  for (int k = 0; k < kN; ++k) aligned &= reinterpret_cast<uintptr_t>(it.data[k]) % 16 == 0;
  if (it.is_contiguous() && aligned) {
    constexpr int V = 16 / max_size<Out, In...>() > 0 ? 16 / max_size<Out, In...>() : 1;
    unsigned grid = grid_for(it.numel / V + 1, kThreads);
    Out* out = reinterpret_cast<Out*>(it.data[0]);
    using Ins = std::tuple<In...>;
    if constexpr (kN == 1) {
      vectorized0<V, Out><<<grid, kThreads, 0, stream>>>(it.numel, f, out);
    } else if constexpr (kN == 2) {
      using A = std::tuple_element_t<0, Ins>;
      vectorized1<V, Out, A>
          <<<grid, kThreads, 0, stream>>>(it.numel, f, out, reinterpret_cast<const A*>(it.data[1]));
    } else if constexpr (kN == 3) {
      using A = std::tuple_element_t<0, Ins>;
      using B = std::tuple_element_t<1, Ins>;
      vectorized2<V, Out, A, B>
          <<<grid, kThreads, 0, stream>>>(it.numel, f, out, reinterpret_cast<const A*>(it.data[1]),
                                          reinterpret_cast<const B*>(it.data[2]));
    } else {
      using A = std::tuple_element_t<0, Ins>;
      using B = std::tuple_element_t<1, Ins>;
      using C = std::tuple_element_t<2, Ins>;
      vectorized3<V, Out, A, B, C><<<grid, kThreads, 0, stream>>>(
          it.numel, f, out, reinterpret_cast<const A*>(it.data[1]),
          reinterpret_cast<const B*>(it.data[2]), reinterpret_cast<const C*>(it.data[3]));
    }
  } else {
    Pointers<kN> data;
    for (int k = 0; k < kN; ++k) data.p[k] = it.data[k];
    strided_kernel<Out, F, In...><<<grid_for(it.numel, kThreads), kThreads, 0, stream>>>(
        it.numel, f, OffsetCalculator<kN>(it), data);
  }
  EMBER_CUDA_LAUNCH_CHECK("elementwise kernel");
}

/// CUDA's launcher for the shared op tables (functors/expand.h).
struct Launcher {
  static constexpr bool kComplex = false;  // complex tensors are CPU-only for now
  template <typename Out, typename... In, typename F>
  static void run(const TensorIter& it, const F& f) {
    gpu_kernel<Out, In...>(it, f);
  }
};

}  // namespace ember::cuda
