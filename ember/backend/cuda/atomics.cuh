// atomicAdd for every type ember scatters into, the 16-bit floats included.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ember/core/half.h"

namespace ember::cuda {

template <typename T>
__device__ inline void atomic_add(T* address, T value) {
  if constexpr (std::is_same_v<T, Half>) {
    atomicAdd(reinterpret_cast<__half*>(address), __ushort_as_half(value.bits));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(address), __ushort_as_bfloat16(value.bits));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),
              static_cast<unsigned long long>(value));
  } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, bool>) {
    // Bytes: add into the aligned 32-bit word that holds them.
    auto* word =
        reinterpret_cast<unsigned int*>(reinterpret_cast<uintptr_t>(address) & ~uintptr_t{3});
    unsigned shift = (reinterpret_cast<uintptr_t>(address) & 3) * 8;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      unsigned byte = ((assumed >> shift) & 0xFFu) + static_cast<unsigned>(value);
      old = atomicCAS(word, assumed, (assumed & ~(0xFFu << shift)) | ((byte & 0xFFu) << shift));
    } while (assumed != old);
  } else {
    atomicAdd(address, value);
  }
}

}  // namespace ember::cuda
