// Parameter initialisation (torch.nn.init), in place and without recording gradients.
#pragma once

#include <string>
#include <utility>

#include "ember/core/tensor.h"

namespace ember::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Sigmoid, Tanh, ReLU, LeakyReLU };

/// (fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field size.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
/// The recommended gain for a nonlinearity (param: LeakyReLU's negative slope).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

Tensor& uniform_(Tensor& t, double a = 0, double b = 1);
Tensor& normal_(Tensor& t, double mean = 0, double std = 1);
Tensor& constant_(Tensor& t, Scalar value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);
Tensor& xavier_uniform_(Tensor& t, double gain = 1);
Tensor& xavier_normal_(Tensor& t, double gain = 1);
Tensor& kaiming_uniform_(Tensor& t, double a = 0, FanMode mode = FanMode::FanIn,
                         Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor& kaiming_normal_(Tensor& t, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);

}  // namespace ember::nn::init
