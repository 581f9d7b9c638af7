#include "ember/nn/modules/linear.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/ops/linalg.h"

namespace ember::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias)
    : in_features(in),
      out_features(out),
      weight(register_parameter("weight", uninitialized({out, in}))),
      bias(register_parameter("bias", with_bias ? uninitialized({out}) : Tensor())) {
  EMBER_CHECK(in >= 0 && out >= 0,
              "[Linear] in_features and out_features must be non-negative, got ", in, " and ", out);
  if (should_initialize()) reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, bias); }

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) +
         ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "True" : "False");
}

std::shared_ptr<Module> Linear::clone_impl() const {
  return std::make_shared<Linear>(in_features, out_features, bias.defined());
}

}  // namespace ember::nn
