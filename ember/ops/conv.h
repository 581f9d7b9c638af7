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

/// The transposed convolution (the gradient of conv2d with respect to its input): x (N, C_in, H,
/// W) or unbatched, weight (C_in, C_out / groups, kH, kW), bias (C_out) or undefined.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Pair stride = {1, 1}, Pair padding = {0, 0}, Pair output_padding = {0, 0},
                        int64_t groups = 1, Pair dilation = {1, 1});

}  // namespace ember
