// Layer norm's per-element math, written once for the CPU loop and the CUDA kernel: the forward
// y = (x - mean) rstd w + b, and the input gradient from a row's two sums,
// dx = rstd (dy w - mean(dy w) - xhat mean(dy w xhat)).
#pragma once

#include "ember/core/macros.h"

namespace ember {

template <typename A>
EMBER_HOST_DEVICE inline A layer_norm_forward(A x, A mean, A rstd, A w, A b) {
  return (x - mean) * rstd * w + b;
}

/// dy w at one element, its row's sums sum(dy w) and sum(dy w xhat) over n elements.
template <typename A>
EMBER_HOST_DEVICE inline A layer_norm_backward(A dyw, A xhat, A rstd, A sum_dyw, A sum_dyw_xhat,
                                               A n) {
  return rstd * (dyw - sum_dyw / n - xhat * (sum_dyw_xhat / n));
}

}  // namespace ember
