// torch.nn.functional.interpolate: resizing the spatial dims of (N, C, ...) inputs, 1 to 3 of
// them, by nearest, nearest-exact, (bi/tri)linear, bicubic or area sampling, as PyTorch computes
// each. Every mode is separable: each spatial axis is a product with an (out, in) matrix of
// weights, so the op runs on any device and its gradient comes with it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// x (N, C, d1[, d2[, d3]]) resized to `size` (one per spatial dim). `scales`, when given (one
/// per spatial dim, from scale_factor= without recompute_scale_factor), map output coordinates
/// to input ones as PyTorch does (1 / scale); otherwise the ratio of the sizes does.
Tensor interpolate(const Tensor& x, const Shape& size, const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   const std::vector<double>& scales = {});

/// The output size interpolate gives for scale factors (floor(in * scale) per spatial dim).
Shape interpolate_size(const Tensor& x, const std::vector<double>& scale_factors);

}  // namespace ember
