// Normalisations over the last dims of a sample (layer norm, RMS norm), over groups of channels
// (group norm, instance norm), and of vectors to unit norm (normalize), as torch.nn.functional.
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember::nn::functional {

/// (x - mean) / sqrt(var + eps) over the last normalized_shape.size() dims, then * weight + bias
/// (either undefined: none).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// x / sqrt(mean(x^2) + eps) over the last dims, then * weight; eps defaults to the dtype's
/// machine epsilon, as PyTorch's.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);
/// x (N, C, *) normalised over each of num_groups groups of channels (and the spatial dims), then
/// per-channel weight and bias.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// Each (sample, channel) normalised over its spatial dims; with running statistics when
/// use_input_stats is false (eval mode of a module that tracks them).
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps);
/// x / max(||x||_p, eps) along dim.
Tensor normalize(const Tensor& x, double p = 2, int64_t dim = 1, double eps = 1e-12);
/// Local response normalisation across channels (AlexNet's).
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75,
                           double k = 1.0);

}  // namespace ember::nn::functional
