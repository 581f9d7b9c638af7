// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay
// (torch.optim.SGD).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions {
  explicit SGDOptions(double lr) : lr(lr) {}
  double lr;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;  // ascend the objective instead
  SGDOptions& with_momentum(double m) {
    momentum = m;
    return *this;
  }
  SGDOptions& with_dampening(double d) {
    dampening = d;
    return *this;
  }
  SGDOptions& with_weight_decay(double w) {
    weight_decay = w;
    return *this;
  }
  SGDOptions& with_nesterov(bool n = true) {
    nesterov = n;
    return *this;
  }
  SGDOptions& with_maximize(bool m = true) {
    maximize = m;
    return *this;
  }
  /// The options of a parameter group (the names PyTorch's param_groups use).
  static SGDOptions from(const std::map<std::string, double>& group);
};

namespace functional {
/// One SGD step of every parameter, torch.optim.SGD's math. momentum_buffers[i] undefined means
/// none yet: the first step makes it (a copy of the gradient), as PyTorch does.
void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         std::vector<Tensor>& momentum_buffers, const SGDOptions& options);
}  // namespace functional

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options);
  void step() override;
};

}  // namespace ember::optim
