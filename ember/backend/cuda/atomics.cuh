// atomicAdd for every type ember scatters into, the 16-bit floats included, and atomic_update for
// any other combination (scatter's prod, max and min): a compare-and-swap loop on the aligned word
// that holds the value.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ember/core/half.h"

namespace ember::cuda {

// *address = f(*address, value), atomically, for a value of 1, 2, 4 or 8 bytes.
template <typename T, typename F>
__device__ inline void atomic_update(T* address, T value, F f) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 8) {
    auto* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *word, assumed;
    do {
      assumed = old;
      T now = f(*reinterpret_cast<const T*>(&assumed), value);
      old = atomicCAS(word, assumed, *reinterpret_cast<const unsigned long long*>(&now));
    } while (assumed != old);
  } else if constexpr (sizeof(T) == 4) {
    auto* word = reinterpret_cast<unsigned int*>(address);
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      T now = f(*reinterpret_cast<const T*>(&assumed), value);
      old = atomicCAS(word, assumed, *reinterpret_cast<const unsigned int*>(&now));
    } while (assumed != old);
  } else {
    // 1 or 2 bytes: swap the aligned 32-bit word that holds them.
    constexpr unsigned kBits = sizeof(T) * 8, kMask = (1u << kBits) - 1u;
    auto* word =
        reinterpret_cast<unsigned int*>(reinterpret_cast<uintptr_t>(address) & ~uintptr_t{3});
    unsigned shift = (reinterpret_cast<uintptr_t>(address) & 3) * 8;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      auto bits = static_cast<std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>>(
          (assumed >> shift) & kMask);
      T now = f(*reinterpret_cast<const T*>(&bits), value);
      unsigned out = *reinterpret_cast<const std::conditional_t<sizeof(T) == 1, uint8_t,
                                                                uint16_t>*>(&now);
      old = atomicCAS(word, assumed, (assumed & ~(kMask << shift)) | (out << shift));
    } while (assumed != old);
  }
}

template <typename T>
__device__ inline void atomic_add(T* address, T value) {
  if constexpr (std::is_same_v<T, Half>) {
    atomicAdd(reinterpret_cast<__half*>(address), __ushort_as_half(value.bits));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(address), __ushort_as_bfloat16(value.bits));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),
              static_cast<unsigned long long>(value));
  } else if constexpr (sizeof(T) <= 2) {
    // bool and the 8- and 16-bit integers (CUDA adds none of them): wrapping addition by
    // compare-and-swap on the word that holds them.
    atomic_update(address, value, [](T a, T b) { return static_cast<T>(a + b); });
  } else {
    atomicAdd(address, value);
  }
}

}  // namespace ember::cuda
