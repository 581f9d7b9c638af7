// Adam and AdamW (decoupled weight decay), as torch.optim implements them.
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr(lr) {}
  double lr;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;  // ascend the objective instead
  AdamOptions& with_betas(double b1, double b2) {
    beta1 = b1;
    beta2 = b2;
    return *this;
  }
  AdamOptions& with_eps(double e) {
    eps = e;
    return *this;
  }
  AdamOptions& with_weight_decay(double w) {
    weight_decay = w;
    return *this;
  }
  AdamOptions& with_amsgrad(bool a = true) {
    amsgrad = a;
    return *this;
  }
  AdamOptions& with_maximize(bool m = true) {
    maximize = m;
    return *this;
  }
  /// The options of a parameter group.
  static AdamOptions from(const std::map<std::string, double>& group);
};

namespace functional {
/// One Adam step of every parameter, torch.optim.Adam's math; `decoupled` is AdamW's weight decay
/// (the weights shrink by lr * weight_decay instead of the decay joining the gradient). steps[i]
/// is parameter i's step count, a one-element tensor on the CPU that this increments.
/// max_exp_avg_sqs is read only with amsgrad.
void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
          const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
          const AdamOptions& options, bool decoupled);
}  // namespace functional

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = AdamOptions());
  void step() override;

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled);

 private:
  bool decoupled_;  // AdamW: weight decay applied to the weights, not added to the gradient
};

/// AdamW's default weight decay is 0.01, as in PyTorch.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params,
        const AdamOptions& options = AdamOptions().with_weight_decay(0.01));
  AdamW(std::vector<ParamGroup> groups,
        const AdamOptions& options = AdamOptions().with_weight_decay(0.01));
};

}  // namespace ember::optim
