// torch.nn.utils' gradient clipping: by the norm of all gradients together, or by value.
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember::nn::utils {

/// Scales the gradients of `params` in place so that their total norm (the p-norm of every
/// gradient element together; p = inf: the largest magnitude) is at most max_norm, and returns
/// the total norm before clipping as a 0-d tensor. Parameters without a gradient are skipped.
/// Nothing waits for the device: the scale is clamp(max_norm / (norm + 1e-6), max=1), applied
/// whatever its value, as PyTorch does. error_if_nonfinite: a nan or inf norm is an error.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient element of `params` to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace ember::nn::utils
