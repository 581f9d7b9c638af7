#include "ember/nn/init.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::nn::init {

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  EMBER_CHECK(
      t.dim() >= 2,
      "[init] fan in and fan out can not be computed for tensor with fewer than 2 dimensions, got ",
      t.sizes());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(Nonlinearity n, double param) {
  switch (n) {
    case Nonlinearity::Linear:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU:
      return std::sqrt(2.0 / (1 + param * param));
  }
  return 1.0;
}

Tensor& uniform_(Tensor& t, double a, double b) {
  NoGradGuard no_grad;
  return ember::uniform_(t, a, b);
}
Tensor& normal_(Tensor& t, double mean, double std) {
  NoGradGuard no_grad;
  return ember::normal_(t, mean, std);
}
Tensor& constant_(Tensor& t, Scalar value) {
  NoGradGuard no_grad;
  return t.fill_(value);
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1); }

Tensor& xavier_uniform_(Tensor& t, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double a = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return init::uniform_(t, -a, a);
}
Tensor& xavier_normal_(Tensor& t, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return init::normal_(t, 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity n) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  EMBER_CHECK(fan > 0, "[init] cannot initialise a tensor with zero fan, got shape ", t.sizes());
  return calculate_gain(n, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

// Zero-element tensors (Linear(0, 5)) have nothing to initialise: a no-op, as in PyTorch.
Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, Nonlinearity n) {
  if (t.numel() == 0) return t;
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, n);
  return init::uniform_(t, -bound, bound);
}
Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, Nonlinearity n) {
  if (t.numel() == 0) return t;
  return init::normal_(t, 0, kaiming_std(t, a, mode, n));
}

}  // namespace ember::nn::init
