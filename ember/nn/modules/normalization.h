// nn::LayerNorm: normalises the last dims of each sample (one fused op, ember/ops/layer_norm.h),
// then an elementwise affine map; PyTorch's parameter names and initialisation (weight 1, bias 0).
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

class LayerNorm : public Module {
 public:
  /// bias = false: the affine map has a weight only (nanoGPT's LayerNorm(ndim, bias=False)).
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;
  void reset_parameters();

  const Shape normalized_shape;
  const double eps;
  const bool elementwise_affine;
  Tensor& weight;  // normalized_shape, or undefined without elementwise_affine
  Tensor& bias;    // normalized_shape, or undefined

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
