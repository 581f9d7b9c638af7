// Batch norm's per-channel math, written once for the CPU loops and the CUDA kernels: the
// elementwise passes of the forward and of the backward with their per-channel coefficients,
// computed here from the channel's statistics. (x - mean) is formed before scaling, so a channel
// whose mean is large next to its spread keeps its precision.
#pragma once

#include "ember/core/macros.h"

namespace ember {

/// y = (x - mean) * invstd * weight + bias.
template <typename A>
struct BatchNormForward {
  A mean, scale, bias;
  EMBER_HOST_DEVICE BatchNormForward(A mean_, A invstd, A weight, A bias_)
      : mean(mean_), scale(invstd * weight), bias(bias_) {}
  EMBER_HOST_DEVICE A operator()(A x) const { return (x - mean) * scale + bias; }
};

/// The input gradient
///   gx = (dy - sum_dy / count - (x - mean) * invstd^2 * sum_dy_xmu / count) * invstd * weight,
/// where the sums run over the channel's `count` elements (of every rank, for SyncBatchNorm).
/// With statistics that are constants (evaluation mode) the sums are 0: gx = dy * invstd * weight.
template <typename A>
struct BatchNormBackward {
  A mean, mean_dy, proj, scale;
  EMBER_HOST_DEVICE BatchNormBackward(A mean_, A invstd, A weight, A sum_dy, A sum_dy_xmu, A count)
      : mean(mean_),
        mean_dy(sum_dy / count),
        proj(sum_dy_xmu / count * invstd * invstd),
        scale(invstd * weight) {}
  EMBER_HOST_DEVICE A operator()(A dy, A x) const {
    return (dy - mean_dy - (x - mean) * proj) * scale;
  }
};

}  // namespace ember
