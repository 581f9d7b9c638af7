// 2-D convolution (stride, padding, dilation, groups).
#pragma once

#include <array>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

using Pair = std::array<int64_t, 2>;

/// x (N, C, H, W) or (C, H, W); weight (O, C / groups, kH, kW); bias (O) or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Pair stride = {1, 1}, Pair padding = {0, 0}, Pair dilation = {1, 1},
              int64_t groups = 1);

/// PyTorch's string paddings of a convolution: 'valid' (none) or 'same' (the output as large as
/// the input; stride 1 only). `kernel` is the weight's spatial size. Where a dimension's total
/// padding dilation * (kernel - 1) is odd, the extra element goes after (`extra`), as PyTorch's.
struct StringPadding {
  Pair before{0, 0};
  Pair extra{0, 0};
};
StringPadding conv_string_padding(std::string_view padding, Pair kernel, Pair stride,
                                  Pair dilation);

/// conv2d with padding 'valid' or 'same' (conv_string_padding).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride,
              std::string_view padding, Pair dilation = {1, 1}, int64_t groups = 1);

/// The transposed convolution (the gradient of conv2d with respect to its input): x (N, C_in, H,
/// W) or unbatched, weight (C_in, C_out / groups, kH, kW), bias (C_out) or undefined.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Pair stride = {1, 1}, Pair padding = {0, 0}, Pair output_padding = {0, 0},
                        int64_t groups = 1, Pair dilation = {1, 1});

}  // namespace ember
