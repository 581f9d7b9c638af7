// Adam's variants: Adamax (the infinity norm), NAdam (Nesterov momentum) and RAdam (the rectified
// adaptive rate), as torch.optim implements them.
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// Adamax's, NAdam's and RAdam's options; momentum_decay is NAdam's only.
struct AdamVariantOptions {
  explicit AdamVariantOptions(double lr) : lr(lr) {}
  double lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3;
  bool maximize = false;
  AdamVariantOptions& with_betas(double b1, double b2) { return beta1 = b1, beta2 = b2, *this; }
  AdamVariantOptions& with_eps(double e) { return eps = e, *this; }
  AdamVariantOptions& with_weight_decay(double w) { return weight_decay = w, *this; }
  AdamVariantOptions& with_momentum_decay(double d) { return momentum_decay = d, *this; }
  AdamVariantOptions& with_maximize(bool m = true) { return maximize = m, *this; }
  std::map<std::string, double> to_map(const char* optimizer) const;
  static AdamVariantOptions from(const std::map<std::string, double>& group);
};

namespace functional {
/// One Adamax step; steps[i] (a one-element CPU tensor) is incremented.
void adamax(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
            const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
            const std::vector<Tensor>& steps, const AdamVariantOptions& options);
/// One NAdam step; steps[i] and mu_products[i] (one-element CPU tensors) are updated.
void nadam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
           const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
           const std::vector<Tensor>& mu_products, const std::vector<Tensor>& steps,
           const AdamVariantOptions& options);
/// One RAdam step; steps[i] is incremented.
void radam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
           const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
           const std::vector<Tensor>& steps, const AdamVariantOptions& options);
}  // namespace functional

/// Which of the three a VariantOptimizer runs.
enum class AdamVariant { Adamax, NAdam, RAdam };

/// The three share their state's shape and their options; each is one of these.
class AdamVariantOptimizer : public Optimizer {
 public:
  void step() override;

 protected:
  AdamVariantOptimizer(AdamVariant variant, std::vector<ParamGroup> groups,
                       const AdamVariantOptions& options);

 private:
  AdamVariant variant_;
};

/// torch.optim.Adamax: default lr 2e-3.
class Adamax : public AdamVariantOptimizer {
 public:
  Adamax(std::vector<ParamGroup> groups, const AdamVariantOptions& options = defaults())
      : AdamVariantOptimizer(AdamVariant::Adamax, std::move(groups), options) {}
  Adamax(std::vector<Tensor> params, const AdamVariantOptions& options = defaults())
      : Adamax(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  static AdamVariantOptions defaults() { return AdamVariantOptions(2e-3); }
};

/// torch.optim.NAdam: default lr 2e-3, momentum_decay 4e-3.
class NAdam : public AdamVariantOptimizer {
 public:
  NAdam(std::vector<ParamGroup> groups, const AdamVariantOptions& options = defaults())
      : AdamVariantOptimizer(AdamVariant::NAdam, std::move(groups), options) {}
  NAdam(std::vector<Tensor> params, const AdamVariantOptions& options = defaults())
      : NAdam(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  static AdamVariantOptions defaults() { return AdamVariantOptions(2e-3); }
};

/// torch.optim.RAdam: default lr 1e-3.
class RAdam : public AdamVariantOptimizer {
 public:
  RAdam(std::vector<ParamGroup> groups, const AdamVariantOptions& options = defaults())
      : AdamVariantOptimizer(AdamVariant::RAdam, std::move(groups), options) {}
  RAdam(std::vector<Tensor> params, const AdamVariantOptions& options = defaults())
      : RAdam(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  static AdamVariantOptions defaults() { return AdamVariantOptions(1e-3); }
};

}  // namespace ember::optim
