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
template <size_t N>
struct StringPadding {
  std::array<int64_t, N> before{};
  std::array<int64_t, N> extra{};
};
template <size_t N>
StringPadding<N> conv_string_padding(std::string_view padding, std::array<int64_t, N> kernel,
                                     std::array<int64_t, N> stride,
                                     std::array<int64_t, N> dilation) {
  StringPadding<N> out;
  if (padding == "valid") return out;
  EMBER_CHECK(padding == "same", "Invalid padding string: '", padding, "'");
  for (size_t i = 0; i < N; ++i) {
    EMBER_CHECK(stride[i] == 1, "padding='same' is not supported for strided convolutions");
    int64_t total = dilation[i] * (kernel[i] - 1);
    out.before[i] = total / 2;
    out.extra[i] = total % 2;
  }
  return out;
}

/// conv2d with padding 'valid' or 'same' (conv_string_padding).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride,
              std::string_view padding, Pair dilation = {1, 1}, int64_t groups = 1);

/// The transposed convolution (the gradient of conv2d with respect to its input): x (N, C_in, H,
/// W) or unbatched, weight (C_in, C_out / groups, kH, kW), bias (C_out) or undefined.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Pair stride = {1, 1}, Pair padding = {0, 0}, Pair output_padding = {0, 0},
                        int64_t groups = 1, Pair dilation = {1, 1});

using Triple = std::array<int64_t, 3>;

/// 3-D convolution: x (N, C, D, H, W) or (C, D, H, W); weight (O, C / groups, kD, kH, kW). Made of
/// conv2d: one 2-D convolution of the depth-strided input per kernel depth, summed.
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Triple stride = {1, 1, 1}, Triple padding = {0, 0, 0}, Triple dilation = {1, 1, 1},
              int64_t groups = 1);

/// conv3d with padding 'valid' or 'same' (conv_string_padding).
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, Triple stride,
              std::string_view padding, Triple dilation = {1, 1, 1}, int64_t groups = 1);

/// The transposed 3-D convolution, weight (C_in, C_out / groups, kD, kH, kW); made of
/// conv_transpose2d per kernel depth, each placed at its depth offset.
Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Triple stride = {1, 1, 1}, Triple padding = {0, 0, 0},
                        Triple output_padding = {0, 0, 0}, int64_t groups = 1,
                        Triple dilation = {1, 1, 1});

}  // namespace ember
