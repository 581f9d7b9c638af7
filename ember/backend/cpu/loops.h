// The CPU's elementwise loop, generic over a functor: the same functors run in the CUDA kernels.
// Contiguous operands (and inputs broadcast from one element) get plain typed loops that g++
// vectorises; anything else walks the TensorIter's strides. Large ranges are split over the pool.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include "ember/backend/cpu/thread_pool.h"
#include "ember/backend/cpu/vector_math.h"
#include "ember/backend/tensor_iter.h"

namespace ember::cpu {

/// Calls fn(ptrs, inner_strides, n) for each run of the innermost dim within linear indices
/// [begin, end), with ptrs pointing at the run's first element of each operand.
template <typename Fn>
void for_each_run(const TensorIter& it, int64_t begin, int64_t end, const Fn& fn) {
  const int nt = it.ntensors;
  int64_t counter[TensorIter::kMaxDims];
  int64_t rem = begin;
  for (int d = 0; d < it.ndim; ++d) {
    counter[d] = rem % it.sizes[d];
    rem /= it.sizes[d];
  }
  char* ptrs[TensorIter::kMaxOperands];
  int64_t inner[TensorIter::kMaxOperands];
  for (int i = 0; i < nt; ++i) {
    int64_t off = 0;
    for (int d = 0; d < it.ndim; ++d) off += counter[d] * it.strides[i][d];
    ptrs[i] = it.data[i] + off;
    inner[i] = it.strides[i][0];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = std::min(it.sizes[0] - counter[0], end - pos);
    fn(ptrs, inner, n);
    pos += n;
    if (pos >= end) break;
    // Advance: innermost dim wraps, carry outward.
    for (int i = 0; i < nt; ++i) ptrs[i] += n * inner[i];
    counter[0] += n;
    for (int d = 0; d < it.ndim - 1 && counter[d] == it.sizes[d]; ++d) {
      for (int i = 0; i < nt; ++i) ptrs[i] += it.strides[i][d + 1] - it.sizes[d] * it.strides[i][d];
      counter[d] = 0;
      ++counter[d + 1];
    }
  }
}

/// Outputs larger than this (half the last-level cache) are written with non-temporal stores:
/// they cannot stay in the cache anyway, and streaming them skips reading each destination line
/// first (a third of the memory traffic of `c = a + b`).
int64_t stream_threshold_bytes();

namespace detail {

// Stores 64 bytes at a 64-byte aligned address without bringing the line into the cache.
EMBER_FORCE_INLINE void stream64(void* dst, const void* src) {
#if defined(__AVX512F__)
  _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_loadu_si512(src));
#elif defined(__AVX__)
  _mm256_stream_si256(static_cast<__m256i*>(dst),
                      _mm256_loadu_si256(static_cast<const __m256i*>(src)));
  _mm256_stream_si256(static_cast<__m256i*>(dst) + 1,
                      _mm256_loadu_si256(static_cast<const __m256i*>(src) + 1));
#else
  std::memcpy(dst, src, 64);
#endif
}

// out[i] = f(in[i]...) over contiguous operands with streaming stores, in 64-byte blocks.
template <typename Out, typename... In, typename F, size_t... I>
void run_streaming(Out* out, [[maybe_unused]] std::tuple<const In*...> in, int64_t n, const F& f,
                   std::index_sequence<I...>) {
  constexpr int64_t kBlock = 64 / static_cast<int64_t>(sizeof(Out));
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i)
    out[i] = static_cast<Out>(f(static_cast<opmath_t<In>>(std::get<I>(in)[i])...));
  for (; i + kBlock <= n; i += kBlock) {
    alignas(64) Out block[kBlock];
    for (int64_t j = 0; j < kBlock; ++j)
      block[j] = static_cast<Out>(f(static_cast<opmath_t<In>>(std::get<I>(in)[i + j])...));
    stream64(out + i, block);
  }
  for (; i < n; ++i) out[i] = static_cast<Out>(f(static_cast<opmath_t<In>>(std::get<I>(in)[i])...));
#if defined(__SSE2__)
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the pool's handshake
#endif
}

template <typename Out, typename... In, typename F, size_t... I>
EMBER_FORCE_INLINE void run_typed(char** ptrs, const int64_t* strides, int64_t n, const F& f,
                                  bool stream, std::index_sequence<I...> seq) {
  using Args = std::tuple<In...>;
  constexpr size_t kIn = sizeof...(In);
#if defined(__AVX2__)
  if constexpr (VectorMath<F, Out, In...>::kAvailable) {  // vector_math.h: sin, cos, log
    run_vector<VectorMath<F, Out, In...>>(reinterpret_cast<float*>(ptrs[0]),
                                          strides[0] / static_cast<int64_t>(sizeof(float)),
                                          reinterpret_cast<const float*>(ptrs[1]),
                                          strides[1] / static_cast<int64_t>(sizeof(float)), n);
    return;
  }
#endif
  bool contiguous = strides[0] == static_cast<int64_t>(sizeof(Out)) &&
                    ((strides[I + 1] == static_cast<int64_t>(sizeof(In))) && ...);
  Out* out = reinterpret_cast<Out*>(ptrs[0]);
  if (contiguous) {
    std::tuple<const In*...> in{reinterpret_cast<const In*>(ptrs[I + 1])...};
    if (stream && (... && (ptrs[I + 1] != ptrs[0]))) {
      run_streaming<Out, In...>(out, in, n, f, seq);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(f(static_cast<opmath_t<In>>(std::get<I>(in)[i])...));
    return;
  }
  if constexpr (kIn == 2) {
    // One operand broadcast from a single element: x * 2, bias + y.
    using A = std::tuple_element_t<0, Args>;
    using B = std::tuple_element_t<1, Args>;
    if (strides[0] == static_cast<int64_t>(sizeof(Out))) {
      if (strides[1] == static_cast<int64_t>(sizeof(A)) && strides[2] == 0) {
        const A* a = reinterpret_cast<const A*>(ptrs[1]);
        opmath_t<B> b = static_cast<opmath_t<B>>(*reinterpret_cast<const B*>(ptrs[2]));
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<Out>(f(static_cast<opmath_t<A>>(a[i]), b));
        return;
      }
      if (strides[1] == 0 && strides[2] == static_cast<int64_t>(sizeof(B))) {
        opmath_t<A> a = static_cast<opmath_t<A>>(*reinterpret_cast<const A*>(ptrs[1]));
        const B* b = reinterpret_cast<const B*>(ptrs[2]);
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<Out>(f(a, static_cast<opmath_t<B>>(b[i])));
        return;
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(ptrs[0] + i * strides[0]) =
        static_cast<Out>(f(static_cast<opmath_t<In>>(
            *reinterpret_cast<const In*>(ptrs[I + 1] + i * strides[I + 1]))...));
  }
}

}  // namespace detail

/// out = f(in...) over the iterator; f takes and returns opmath values (float for 16-bit floats).
template <typename Out, typename... In, typename F>
void cpu_kernel(const TensorIter& it, const F& f) {
  bool stream = it.numel * static_cast<int64_t>(sizeof(Out)) > stream_threshold_bytes();
  auto run = [&](int64_t b, int64_t e) {
    for_each_run(it, b, e, [&](char** ptrs, const int64_t* strides, int64_t n) {
      detail::run_typed<Out, In...>(ptrs, strides, n, f, stream, std::index_sequence_for<In...>{});
    });
  };
  parallel_for(0, it.numel, kGrainSize, run);
}

/// The CPU's launcher for the shared op tables (functors/expand.h).
struct Launcher {
  static constexpr bool kComplex = true;
  template <typename Out, typename... In, typename F>
  static void run(const TensorIter& it, const F& f) {
    cpu_kernel<Out, In...>(it, f);
  }
};

}  // namespace ember::cpu
