#include "ember/nn/clip_grad.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/reduce.h"

namespace ember::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return zeros({});
  // Each gradient's norm in its own dtype, stacked in the dtype they promote to (as torch.stack
  // does): float64 gradients keep float64's precision.
  DType common = grads[0].dtype();
  for (const Tensor& g : grads) common = promote_types(common, g.dtype());
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) norms.push_back(norm(g, norm_type).to(common));
  Tensor total = norm(stack(norms), norm_type);
  if (error_if_nonfinite)
    EMBER_CHECK(std::isfinite(total.item<double>()), "[clip_grad_norm_] the total norm of order ",
                norm_type,
                " of the gradients is non-finite, so it cannot be clipped; pass "
                "error_if_nonfinite=false to clip anyway");
  Tensor coef = (max_norm / (total + 1e-6)).clamp(std::nullopt, 1.0);
  for (Tensor& g : grads) g.mul_(coef.to(g.dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : params)
    if (p.grad().defined()) {
      Tensor g = p.grad();
      g.clamp_(-clip_value, clip_value);
    }
}

}  // namespace ember::nn::utils
