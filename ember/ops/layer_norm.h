// Layer norm as one op with a fused forward and backward (CPU and CUDA kernels over one definition
// of the per-element math, backend/functors/layer_norm.h). nn::functional::layer_norm checks the
// normalized shape and calls it.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// x normalised over its last `ndims` dims (mean 0, variance 1, eps added to the variance), then
/// * weight + bias (of those dims' shape; undefined: none). Statistics in float32 for 16-bit x.
Tensor layer_norm(const Tensor& x, int64_t ndims, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

}  // namespace ember
