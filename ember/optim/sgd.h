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
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options);
  void step() override;
};

}  // namespace ember::optim
