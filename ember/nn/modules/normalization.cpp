#include "ember/nn/modules/normalization.h"

#include <sstream>

#include "ember/nn/init.h"
#include "ember/nn/normalization.h"

namespace ember::nn {

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine, bool with_bias)
    : normalized_shape(std::move(shape)),
      eps(eps_),
      elementwise_affine(affine),
      weight(register_parameter("weight", affine ? uninitialized(normalized_shape) : Tensor())),
      bias(register_parameter("bias",
                              affine && with_bias ? uninitialized(normalized_shape) : Tensor())) {
  EMBER_CHECK(!normalized_shape.empty(), "[LayerNorm] expected a non-empty normalized_shape");
  if (should_initialize()) reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& x) {
  return functional::layer_norm(x, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < normalized_shape.size(); ++i)
    os << (i ? ", " : "") << normalized_shape[i];
  os << (normalized_shape.size() == 1 ? ",)" : ")") << ", eps=" << eps
     << ", elementwise_affine=" << (elementwise_affine ? "True" : "False");
  return os.str();
}

std::shared_ptr<Module> LayerNorm::clone_impl() const {
  return std::make_shared<LayerNorm>(normalized_shape, eps, elementwise_affine, bias.defined());
}

}  // namespace ember::nn
