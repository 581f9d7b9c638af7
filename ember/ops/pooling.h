// 2-D max and average pooling.
#pragma once

#include <optional>

#include "ember/ops/conv.h"

namespace ember {

/// stride defaults to kernel_size.
Tensor max_pool2d(const Tensor& x, Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                  Pair padding = {0, 0}, Pair dilation = {1, 1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& x, Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                  Pair padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);

}  // namespace ember
