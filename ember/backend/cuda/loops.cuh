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

// out[i] = f(in[i]...) over contiguous, 16-byte aligned operands, V elements per thread.
template <int V, typename Out, typename... In, typename F>
__global__ void vectorized_kernel(int64_t n, F f, Out* out, const In*... in) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t vec_n = n / V;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vec_n; i += stride) {
    std::tuple<Vec<In, V>...> loaded{reinterpret_cast<const Vec<In, V>*>(in)[i]...};
    Vec<Out, V> result;
#pragma unroll
    for (int j = 0; j < V; ++j)
      result.v[j] = static_cast<Out>(std::apply(
          [&](const auto&... vs) { return f(static_cast<opmath_t<In>>(vs.v[j])...); }, loaded));
    reinterpret_cast<Vec<Out, V>*>(out)[i] = result;
  }
  // the tail that does not fill a vector
  for (int64_t i = vec_n * V + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<Out>(f(static_cast<opmath_t<In>>(in[i])...));
}

template <typename Out, typename... In, typename F, size_t... I>
__device__ void apply_strided(char* const* data, const int64_t (&off)[sizeof...(In) + 1], const F& f,
                              std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(data[0] + off[0]) =
      static_cast<Out>(f(static_cast<opmath_t<In>>(*reinterpret_cast<const In*>(data[I + 1] + off[I + 1]))...));
}

template <typename Out, typename... In, typename F>
__global__ void strided_kernel(int64_t n, F f, OffsetCalculator<sizeof...(In) + 1> calc,
                               std::array<char*, sizeof...(In) + 1> data) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t off[sizeof...(In) + 1];
    calc.offsets(i, off);
    apply_strided<Out, In...>(data.data(), off, f, std::index_sequence_for<In...>{});
  }
}

inline unsigned grid_for(int64_t work, int64_t per_block) {
  int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535 * 8)));
}

/// out = f(in...) over the iterator on its device's current stream.
template <typename Out, typename... In, typename F>
void gpu_kernel(const TensorIter& it, const F& f) {
  if (it.numel == 0) return;
  cudaStream_t stream = raw_stream(it.device.index());
  constexpr int kN = sizeof...(In) + 1;
  bool aligned = true;
  for (int k = 0; k < kN; ++k) aligned &= reinterpret_cast<uintptr_t>(it.data[k]) % 16 == 0;
  if (it.is_contiguous() && aligned) {
    constexpr int V = std::max(1, 16 / max_size<Out, In...>());
    unsigned grid = grid_for(it.numel / V + 1, kThreads);
    auto unpack = [&](auto... idx) {
      vectorized_kernel<V, Out, In...><<<grid, kThreads, 0, stream>>>(
          it.numel, f, reinterpret_cast<Out*>(it.data[0]),
          reinterpret_cast<const In*>(it.data[decltype(idx)::value])...);
    };
    [&]<size_t... I>(std::index_sequence<I...>) {
      unpack(std::integral_constant<size_t, I + 1>{}...);
    }(std::index_sequence_for<In...>{});
  } else {
    std::array<char*, kN> data;
    for (int k = 0; k < kN; ++k) data[k] = it.data[k];
    strided_kernel<Out, In...><<<grid_for(it.numel, kThreads), kThreads, 0, stream>>>(
        it.numel, f, OffsetCalculator<kN>(it), data);
  }
  EMBER_CUDA_LAUNCH_CHECK("elementwise kernel");
}

}  // namespace ember::cuda
