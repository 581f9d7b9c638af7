// RMSprop, Adagrad and Adadelta: the optimizers that scale each step by a running average of the
// squared gradients (torch.optim.RMSprop, Adagrad, Adadelta).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct RMSpropOptions {
  explicit RMSpropOptions(double lr = 1e-2) : lr(lr) {}
  double lr, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
  RMSpropOptions& with_alpha(double a) { return alpha = a, *this; }
  RMSpropOptions& with_eps(double e) { return eps = e, *this; }
  RMSpropOptions& with_weight_decay(double w) { return weight_decay = w, *this; }
  RMSpropOptions& with_momentum(double m) { return momentum = m, *this; }
  RMSpropOptions& with_centered(bool c = true) { return centered = c, *this; }
  RMSpropOptions& with_maximize(bool m = true) { return maximize = m, *this; }
  std::map<std::string, double> to_map() const;
  static RMSpropOptions from(const std::map<std::string, double>& group);
};

struct AdagradOptions {
  explicit AdagradOptions(double lr = 1e-2) : lr(lr) {}
  double lr, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
  AdagradOptions& with_lr_decay(double d) { return lr_decay = d, *this; }
  AdagradOptions& with_weight_decay(double w) { return weight_decay = w, *this; }
  AdagradOptions& with_initial_accumulator_value(double v) {
    return initial_accumulator_value = v, *this;
  }
  AdagradOptions& with_eps(double e) { return eps = e, *this; }
  AdagradOptions& with_maximize(bool m = true) { return maximize = m, *this; }
  std::map<std::string, double> to_map() const;
  static AdagradOptions from(const std::map<std::string, double>& group);
};

struct AdadeltaOptions {
  explicit AdadeltaOptions(double lr = 1.0) : lr(lr) {}
  double lr, rho = 0.9, eps = 1e-6, weight_decay = 0;
  bool maximize = false;
  AdadeltaOptions& with_rho(double r) { return rho = r, *this; }
  AdadeltaOptions& with_eps(double e) { return eps = e, *this; }
  AdadeltaOptions& with_weight_decay(double w) { return weight_decay = w, *this; }
  AdadeltaOptions& with_maximize(bool m = true) { return maximize = m, *this; }
  std::map<std::string, double> to_map() const;
  static AdadeltaOptions from(const std::map<std::string, double>& group);
};

namespace functional {
/// One RMSprop step. grad_avgs is read only when centered, momentum_buffers only with momentum.
void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RMSpropOptions& options);
/// One Adagrad step; steps[i] (a one-element CPU tensor) is incremented.
void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<Tensor>& steps,
             const AdagradOptions& options);
/// One Adadelta step.
void adadelta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
              const AdadeltaOptions& options);
}  // namespace functional

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& options = RMSpropOptions());
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = RMSpropOptions())
      : RMSprop(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  void step() override;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& options = AdagradOptions());
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = AdagradOptions())
      : Adagrad(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  void step() override;
};

class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& options = AdadeltaOptions());
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = AdadeltaOptions())
      : Adadelta(std::vector<ParamGroup>{{std::move(params), {}}}, options) {}
  void step() override;
};

}  // namespace ember::optim
