// Philox4x32-10 (Salmon et al. 2011), a counter-based generator: the output is a pure function of
// (key, counter), which makes random tensors reproducible across devices and thread counts.
#pragma once

#include <cstdint>

#include "ember/core/macros.h"

namespace ember {

struct Philox {
  uint32_t c[4];
  EMBER_HOST_DEVICE static inline uint32_t mulhi(uint32_t a, uint32_t b, uint32_t* lo) {
    uint64_t p = static_cast<uint64_t>(a) * b;
    *lo = static_cast<uint32_t>(p);
    return static_cast<uint32_t>(p >> 32);
  }
  /// Four random words for counter (index, offset) under key seed.
  EMBER_HOST_DEVICE Philox(uint64_t seed, uint64_t offset, uint64_t index) {
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    c[0] = static_cast<uint32_t>(index);
    c[1] = static_cast<uint32_t>(index >> 32);
    c[2] = static_cast<uint32_t>(offset);
    c[3] = static_cast<uint32_t>(offset >> 32);
    for (int r = 0; r < 10; ++r) {
      uint32_t lo0, lo1;
      uint32_t hi0 = mulhi(0xD2511F53u, c[0], &lo0);
      uint32_t hi1 = mulhi(0xCD9E8D57u, c[2], &lo1);
      uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
      c[0] = n0;
      c[1] = lo1;
      c[2] = n2;
      c[3] = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
  }
};

}  // namespace ember
