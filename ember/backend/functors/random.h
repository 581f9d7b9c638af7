// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011): element i of a tensor drawn
// with (seed, offset) is a pure function of (seed, offset, i), so the CPU loop and the CUDA kernel
// produce the same tensor for the same seed, in any order and on any number of threads.
#pragma once

#include <cstdint>

#include "ember/backend/functors/math.h"
#include "ember/core/macros.h"
#include "ember/core/philox.h"

namespace ember {

/// A double in [0, 1) from `bits` (at most 53) random bits: with the target dtype's significand
/// width, every draw converts to that dtype exactly, so rand never rounds up to 1.
EMBER_HOST_DEVICE inline double uniform_double(uint32_t w0, uint32_t w1, int bits = 53) {
  uint64_t w = (static_cast<uint64_t>(w0) << 21) ^ static_cast<uint64_t>(w1 >> 11);
  return static_cast<double>(w & ((uint64_t{1} << bits) - 1)) /
         static_cast<double>(uint64_t{1} << bits);
}

enum class RandomKind { Uniform, Normal, Integer, Bernoulli };

/// Parameters: Uniform [a, b); Normal mean a, std b; Integer [a, b); Bernoulli p = a (1 w.p. p).
struct RandomParams {
  RandomKind kind = RandomKind::Uniform;
  double a = 0, b = 1;
  uint64_t seed = 0, offset = 0;
  int bits = 53;  // of a uniform draw: the dtype's significand (random_tensor sets it)
};

/// Element `index` of a random tensor, as a double (exact for the integer kind up to 2^53).
EMBER_HOST_DEVICE inline double random_value(const RandomParams& p, uint64_t index) {
  Philox r(p.seed, p.offset, index);
  switch (p.kind) {
    case RandomKind::Uniform:
      return p.a + (p.b - p.a) * uniform_double(r.c[0], r.c[1], p.bits);
    case RandomKind::Normal: {
      // Box-Muller; 1 - u keeps the log argument in (0, 1].
      double u1 = 1.0 - uniform_double(r.c[0], r.c[1]);
      double u2 = uniform_double(r.c[2], r.c[3]);
      return p.a + p.b * ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
    }
    case RandomKind::Integer: {
      uint64_t range = static_cast<uint64_t>(p.b - p.a);
      uint64_t w = (static_cast<uint64_t>(r.c[0]) << 32) | r.c[1];
      return p.a + static_cast<double>(range ? w % range : 0);
    }
    case RandomKind::Bernoulli:
      return uniform_double(r.c[0], r.c[1]) < p.a ? 1.0 : 0.0;
  }
  return 0;
}

}  // namespace ember
