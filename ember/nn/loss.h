// torch.nn.functional's losses beyond cross-entropy, NLL and MSE (functional.h), and the
// similarity measures they are made of. Compositions of ops, so their gradients come from the ops'
// backward formulas. Each takes PyTorch's arguments and reduction ("mean" by default).
#pragma once

#include "ember/core/tensor.h"

namespace ember::nn::functional {

enum class Reduction;

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction);
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: the L1 loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction,
                      double beta = 1.0);
/// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction,
                  double delta = 1.0);
/// -(target log(input) + (1 - target) log(1 - input)), logs clamped at -100 as PyTorch's.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction);
/// binary_cross_entropy(sigmoid(input), target), computed stably; pos_weight weighs the positive
/// term per class.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction reduction,
                                        const Tensor& pos_weight);
/// target (log(target) - input), input being log-probabilities; "batchmean" divides the sum by
/// the batch size. log_target: the target is given as log-probabilities too.
Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction,
              bool log_target = false);
Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                           double margin, Reduction reduction);
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction);
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction);
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction);
Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                             double margin, Reduction reduction);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction);
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full,
                         double eps, Reduction reduction);

/// Cosine of the angle between x1 and x2 along dim, each norm clamped to eps.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// The p-norm of x1 - x2 + eps along the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);

}  // namespace ember::nn::functional
