// Finite-difference gradient checks in float64: the test every differentiable op must pass.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  /// Outputs with more elements are checked along one random direction instead of element-wise.
  int64_t max_full_outputs = 64;
};

/// Checks that the gradients autograd computes for fn(inputs) match central differences. Inputs
/// must be float64 CPU tensors; those with requires_grad are checked. Returns "" on success, or a
/// description of the worst mismatch.
std::string gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                      const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace ember::autograd
