// torch.nn.functional: activations, dropout, normalisation, losses. Compositions of ops, so their
// gradients come from the ops' backward formulas.
#pragma once

#include <optional>
#include <string>
#include <tuple>

#include "ember/ops/batch_norm.h"
#include "ember/ops/conv.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/indexing.h"
#include "ember/ops/interpolate.h"
#include "ember/ops/linalg.h"
#include "ember/ops/pooling.h"
#include "ember/ops/softmax.h"
#include "ember/nn/loss.h"
#include "ember/nn/normalization.h"

namespace ember::nn::functional {

enum class Reduction { None, Mean, Sum };

using ember::adaptive_avg_pool2d;
using ember::avg_pool2d;
using ember::batch_norm;
using ember::conv2d;
using ember::embedding;
using ember::linear;
using ember::log_softmax;
using ember::max_pool2d;
using ember::one_hot;
using ember::relu;
using ember::sigmoid;
using ember::softmax;
using ember::tanh;

/// Zeroes each element with probability p in training and scales the rest by 1 / (1 - p).
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

/// F.interpolate (ops/interpolate.h).
using ember::interpolate;

/// Negative log likelihood of class indices `target` (N) under log-probabilities `input` (N, C)
/// or (C); entries equal to ignore_index count for nothing.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);

/// nll_loss(log_softmax(input, 1), target) for class indices; for floating targets of input's
/// shape (class probabilities), -sum(target * log_softmax(input)) per sample. Inputs may be
/// (C), (N, C) or (N, C, d1, ...), the classes on dim 1, as in PyTorch.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// The reduction PyTorch names "none", "mean" or "sum" (a ValueError otherwise).
Reduction reduction_from(const std::string& name);
/// A loss per element reduced as `reduction` says.
Tensor reduce(const Tensor& loss, Reduction reduction);

/// dropout1d/2d/3d: zeroes whole channels (dim 1 of a batch, dim 0 without one) with
/// probability p, scaling the rest by 1 / (1 - p). `spatial` is the number of dims after the
/// channel dim (1, 2 or 3).
Tensor feature_dropout(const Tensor& x, double p, bool training, int64_t spatial);
/// Alpha dropout (SELU's): keeps the mean and variance of its input.
Tensor alpha_dropout(const Tensor& x, double p = 0.5, bool training = false);
/// ATen's dropout with its mask (torch.native_dropout): (x * mask / (1 - p), mask) with a bool
/// mask of x's shape; when train is false, (a copy of x, all true). train unset means true.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& x, double p, std::optional<bool> train);
/// The p-norm of v over every dim but dim, shaped to broadcast against v (weight norm's g);
/// dim -1 gives the norm of the whole (torch.norm_except_dim).
Tensor norm_except_dim(const Tensor& v, int64_t pow = 2, int64_t dim = 0);

}  // namespace ember::nn::functional
