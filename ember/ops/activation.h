// Activation functions with PyTorch's definitions and defaults: GELU (exact and tanh), SiLU,
// Mish, softplus, the ELU family, leaky ReLU, hardtanh and ReLU6, the hard sigmoid and swish,
// log-sigmoid, softsign, PReLU, GLU, threshold.
#pragma once

#include <string>

#include "ember/core/tensor.h"

namespace ember {

/// x Phi(x); approximate "tanh" uses PyTorch's tanh formula.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
Tensor elu(const Tensor& x, double alpha = 1, double scale = 1);
Tensor selu(const Tensor& x);
Tensor celu(const Tensor& x, double alpha = 1);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor hardtanh(const Tensor& x, Scalar min_val = -1, Scalar max_val = 1);
Tensor relu6(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor tanhshrink(const Tensor& x);
/// x where x > threshold, else value.
Tensor threshold(const Tensor& x, double threshold, double value);
/// max(0, x) + weight min(0, x), weight per channel (dim 1) or one for all.
Tensor prelu(const Tensor& x, const Tensor& weight);
/// a sigmoid(b), where a and b are the halves of x along dim.
Tensor glu(const Tensor& x, int64_t dim = -1);

}  // namespace ember
