// 2-D max, average and adaptive average pooling.
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
Tensor avg_pool2d(const Tensor& x, Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                  Pair padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);
/// Averages over windows that tile the input into output_size (oH, oW) cells; x (N, C, H, W) or
/// (C, H, W), floating. (1, 1) is global average pooling (ResNet's head).
Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size);

}  // namespace ember
