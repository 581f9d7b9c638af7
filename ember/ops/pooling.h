// 2-D and 3-D max, average and adaptive average pooling (3-D made of 2-D along the depth).
#pragma once

#include <optional>
#include <tuple>

#include "ember/ops/conv.h"

namespace ember {

/// stride defaults to kernel_size.
Tensor max_pool2d(const Tensor& x, Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                  Pair padding = {0, 0}, Pair dilation = {1, 1}, bool ceil_mode = false);
/// max_pool2d's values and the flat index (h * W + w) of each maximum within its plane, as
/// PyTorch's return_indices.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Pair kernel_size,
                                                   std::optional<Pair> stride = std::nullopt,
                                                   Pair padding = {0, 0}, Pair dilation = {1, 1},
                                                   bool ceil_mode = false);
/// divisor_override (when given) divides every window's sum in place of its size.
Tensor avg_pool2d(const Tensor& x, Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                  Pair padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// Averages over windows that tile the input into output_size (oH, oW) cells; x (N, C, H, W) or
/// (C, H, W), floating. (1, 1) is global average pooling (ResNet's head).
Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size);

/// 3-D max pooling of (N, C, D, H, W) or (C, D, H, W): values and the flat index (d H W + h W + w)
/// of each maximum within its volume.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, Triple kernel_size,
                                                   std::optional<Triple> stride = std::nullopt,
                                                   Triple padding = {0, 0, 0},
                                                   Triple dilation = {1, 1, 1},
                                                   bool ceil_mode = false);
Tensor max_pool3d(const Tensor& x, Triple kernel_size, std::optional<Triple> stride = std::nullopt,
                  Triple padding = {0, 0, 0}, Triple dilation = {1, 1, 1}, bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& x, Triple kernel_size, std::optional<Triple> stride = std::nullopt,
                  Triple padding = {0, 0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// Averages over windows that tile (D, H, W) into output_size cells.
Tensor adaptive_avg_pool3d(const Tensor& x, Triple output_size);

}  // namespace ember
