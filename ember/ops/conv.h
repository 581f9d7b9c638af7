// 2-D convolution (stride, padding, dilation, groups).
#pragma once

#include <array>

#include "ember/core/tensor.h"

namespace ember {

using Pair = std::array<int64_t, 2>;

/// x (N, C, H, W) or (C, H, W); weight (O, C / groups, kH, kW); bias (O) or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Pair stride = {1, 1}, Pair padding = {0, 0}, Pair dilation = {1, 1},
              int64_t groups = 1);

}  // namespace ember
