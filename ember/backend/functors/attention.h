// What the fused attention kernels (CPU and CUDA) share: the parameters and the dropout decision,
// a pure function of the element's position so that backward recomputes forward's choice.
#pragma once

#include <cstdint>

#include "ember/core/macros.h"
#include "ember/core/philox.h"

namespace ember {

/// The fused attention's inputs besides the tensors.
struct AttentionParams {
  double scale = 1;   // applied to q k^T
  bool causal = false;  // key j is masked for query i when j > i (PyTorch's is_causal)
  double dropout = 0;  // probability of dropping an attention weight
  uint64_t seed = 0, offset = 0;  // the dropout's random stream
};

/// Whether weight (n, i, j) of an Lq x Lk attention survives dropout.
EMBER_HOST_DEVICE inline bool attention_keep(const AttentionParams& p, int64_t n, int64_t i,
                                             int64_t j, int64_t Lq, int64_t Lk) {
  uint64_t index = (static_cast<uint64_t>(n) * static_cast<uint64_t>(Lq) +
                    static_cast<uint64_t>(i)) * static_cast<uint64_t>(Lk) + static_cast<uint64_t>(j);
  Philox r(p.seed, p.offset, index);
  double u = static_cast<double>(r.c[0] >> 8) / 16777216.0;  // 24 bits in [0, 1)
  return u >= p.dropout;
}

}  // namespace ember
