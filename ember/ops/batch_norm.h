// Batch normalisation: the whole op with one fused autograd node, and its building blocks under
// PyTorch's names (torch.batch_norm_stats, batch_norm_elemt, ...), which SyncBatchNorm
// (distributed/sync_batch_norm.h) composes around its collectives. Inputs are (N, C, *), the
// channels on dim 1; per-channel results are float32 for 16-bit inputs, else the input's dtype.
#pragma once

#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// Normalises x over every dim but 1 (F.batch_norm). In training the batch's statistics are used
/// and the running ones, where given, updated in place: running = (1 - momentum) * running +
/// momentum * batch (the variance unbiased); in evaluation the running statistics are used.
/// weight and bias may be undefined (1 and 0).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);

/// Per-channel mean and 1 / sqrt(biased variance + eps) (torch.batch_norm_stats).
std::tuple<Tensor, Tensor> batch_norm_stats(const Tensor& x, double eps);

/// The batch's per-channel mean and biased variance, with the running statistics (where given)
/// updated as batch_norm's training step updates them (torch.batch_norm_update_stats).
std::tuple<Tensor, Tensor> batch_norm_update_stats(const Tensor& x, const Tensor& running_mean,
                                                   const Tensor& running_var, double momentum);

/// (x - mean) * invstd * weight + bias per channel, in x's dtype (torch.batch_norm_elemt).
Tensor batch_norm_elemt(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const Tensor& mean, const Tensor& invstd, double eps);

/// Combines the statistics of several batches (mean, invstd: (W, C); counts: (W) elements per
/// channel) into those of their union, and updates the running ones if defined
/// (torch.batch_norm_gather_stats_with_counts).
std::tuple<Tensor, Tensor> batch_norm_gather_stats_with_counts(
    const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& running_mean,
    const Tensor& running_var, double momentum, double eps, const Tensor& counts);

/// The backward's sums per channel (torch.batch_norm_backward_reduce): sum_dy = sum(grad_out),
/// sum_dy_xmu = sum(grad_out * (x - mean)), and, when asked, grad_weight = sum_dy_xmu * invstd
/// and grad_bias = sum_dy (undefined when not asked).
std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_backward_reduce(
    const Tensor& grad_out, const Tensor& x, const Tensor& mean, const Tensor& invstd,
    const Tensor& weight, bool input_g, bool weight_g, bool bias_g);

/// The input's gradient from sums over `count` elements per channel (all ranks' for
/// SyncBatchNorm): (dy - sum_dy / count - (x - mean) * invstd^2 * sum_dy_xmu / count) * invstd *
/// weight (torch.batch_norm_backward_elemt, with the total count instead of per-rank counts).
Tensor batch_norm_backward_elemt(const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                                 const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                                 const Tensor& sum_dy_xmu, double count);

}  // namespace ember
