#include "ember/nn/loss.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/ops/activation.h"
#include "ember/ops/factory.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"

namespace ember::nn::functional {
namespace {

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK(input.sizes() == target.sizes() ||
                  broadcast_shapes(input.sizes(), target.sizes(), op) == input.sizes(),
              "[", op, "] Using a target size (", target.sizes(),
              ") that is different to the input size (", input.sizes(), ")");
}

Tensor zero(const Tensor& like) { return scalar_tensor(0, like.options()); }

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  EMBER_OP(l1_loss, input, target, reduction);
  check_same_shape("l1_loss", input, target);
  return reduce(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction,
                      double beta) {
  EMBER_OP(smooth_l1_loss, input, target, reduction, beta);
  check_same_shape("smooth_l1_loss", input, target);
  EMBER_CHECK_VALUE(beta >= 0, "[smooth_l1_loss] beta must be non-negative, got ", beta);
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = abs(input - target);
  return reduce(where(lt(d, beta), d * d * (0.5 / beta), d - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  EMBER_OP(huber_loss, input, target, reduction, delta);
  check_same_shape("huber_loss", input, target);
  EMBER_CHECK_VALUE(delta > 0, "[huber_loss] delta must be positive, got ", delta);
  Tensor d = abs(input - target);
  return reduce(where(lt(d, delta), d * d * 0.5, (d - 0.5 * delta) * delta), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  EMBER_OP(binary_cross_entropy, input, target, weight, reduction);
  EMBER_CHECK(input.sizes() == target.sizes(), "[binary_cross_entropy] Using a target size (",
              target.sizes(), ") that is different to the input size (", input.sizes(),
              ") is deprecated. Please ensure they have the same size.");
  // PyTorch clamps the logs at -100 so that a saturated input gives a large, finite loss.
  Tensor log_p = clamp(log(input), Scalar(-100.0), std::nullopt);
  Tensor log_q = clamp(log(1.0 - input), Scalar(-100.0), std::nullopt);
  Tensor loss = -(target * log_p + (1.0 - target) * log_q);
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction reduction,
                                        const Tensor& pos_weight) {
  EMBER_OP(binary_cross_entropy_with_logits, input, target, weight, reduction, pos_weight);
  EMBER_CHECK(input.sizes() == target.sizes(), "[binary_cross_entropy_with_logits] Target size (",
              target.sizes(), ") must be the same as input size (", input.sizes(), ")");
  // (1 - t) x + w_t log(1 + exp(-x)), log(1 + exp(-x)) = softplus(-x) computed without overflow.
  Tensor log_sig_neg = softplus(-input);  // -log(sigmoid(x))
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor lw = (pos_weight - 1.0) * target + 1.0;
    loss = (1.0 - target) * input + lw * log_sig_neg;
  } else {
    loss = (1.0 - target) * input + log_sig_neg;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction,
              bool log_target) {
  EMBER_OP(kl_div, input, target, reduction, log_target);
  Tensor loss = log_target ? exp(target) * (target - input)
                           : where(gt(target, 0), target * (log(target) - input), zero(input));
  if (reduction == "batchmean") return input.dim() == 0 ? loss.sum() : loss.sum() / input.size(0);
  return reduce(loss, reduction_from(reduction));
}

Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                           double margin, Reduction reduction) {
  EMBER_OP(margin_ranking_loss, x1, x2, target, margin, reduction);
  return reduce(clamp(-target * (x1 - x2) + margin, Scalar(0.0), std::nullopt), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction) {
  EMBER_OP(hinge_embedding_loss, input, target, margin, reduction);
  Tensor z = zero(input);
  Tensor margin_part = where(eq(target, -1), clamp(margin - input, Scalar(0.0), std::nullopt), z);
  Tensor output = where(eq(target, 1), input, z) + margin_part;
  return reduce(output, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  EMBER_OP(soft_margin_loss, input, target, reduction);
  return reduce(log1p(exp(-target * input)), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  EMBER_OP(multilabel_soft_margin_loss, input, target, weight, reduction);
  Tensor loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input));
  if (weight.defined()) loss = loss * weight;
  Tensor per_sample = loss.sum({-1}) / static_cast<double>(input.size(-1));
  return reduce(per_sample, reduction);
}

Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                             double margin, Reduction reduction) {
  EMBER_OP(cosine_embedding_loss, x1, x2, target, margin, reduction);
  // PyTorch's formula: the cosine from the sums of products, with EPSILON 1e-12 in the norms.
  constexpr double kEps = 1e-12;
  int64_t d = x1.dim() - 1;
  Tensor prod = (x1 * x2).sum({d});
  Tensor mag1 = (x1 * x1).sum({d}) + kEps, mag2 = (x2 * x2).sum({d}) + kEps;
  Tensor cos = prod / sqrt(mag1 * mag2);
  Tensor z = zero(cos);
  Tensor pos = where(eq(target, 1), 1.0 - cos, z);
  Tensor neg = where(eq(target, -1), clamp(cos - margin, Scalar(0.0), std::nullopt), z);
  return reduce(pos + neg, reduction);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  EMBER_OP(pairwise_distance, x1, x2, p, eps, keepdim);
  int64_t d = std::max<int64_t>(x1.dim(), x2.dim()) - 1;
  return norm(x1 - x2 + eps, p, Dims{d}, keepdim);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction) {
  EMBER_OP(triplet_margin_loss, anchor, positive, negative, margin, p, eps, swap, reduction);
  EMBER_CHECK_VALUE(margin > 0, "[triplet_margin_loss] margin must be greater than 0, got ",
                    margin);
  Tensor d_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor d_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp(d_pos - d_neg + margin, Scalar(0.0), std::nullopt), reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction) {
  EMBER_OP(poisson_nll_loss, input, target, log_input, full, eps, reduction);
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's approximation of log(target!), counted where target > 1.
    Tensor stirling =
        target * log(target) - target + log(target * (2 * 3.141592653589793)) * 0.5;
    loss = loss + where(gt(target, 1), stirling, zero(stirling));
  }
  return reduce(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full,
                         double eps, Reduction reduction) {
  EMBER_OP(gaussian_nll_loss, input, target, var, full, eps, reduction);
  Tensor v;
  {
    NoGradGuard no_grad;  // the clamp of var does not reach its gradient, as PyTorch's
    v = clamp(var, Scalar(eps), std::nullopt);
  }
  Tensor vv = var + (v - var).detach();
  Tensor loss = (log(vv) + (input - target) * (input - target) / vv) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * 3.141592653589793);
  return reduce(loss, reduction);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  EMBER_OP(cosine_similarity, x1, x2, dim, eps);
  // PyTorch 1.13: sum(x1 x2) / sqrt(clamp_min(sum(x1^2) * sum(x2^2), eps^2)).
  // dim counts in the broadcast shape: both are expanded to it first.
  Shape shape = broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity");
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  Dims d{dim};
  Tensor w12 = (a * b).sum(d);
  Tensor w1 = (a * a).sum(d), w2 = (b * b).sum(d);
  return w12 / sqrt(clamp(w1 * w2, Scalar(eps * eps), std::nullopt));
}

}  // namespace ember::nn::functional
