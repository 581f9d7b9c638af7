// nn::Linear: y = x W^T + b, PyTorch's initialisation (kaiming_uniform with a = sqrt(5)).
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Linear"; }
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_features, out_features;
  Tensor& weight;  // (out_features, in_features)
  Tensor& bias;    // (out_features) or undefined

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
