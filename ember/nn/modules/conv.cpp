#include "ember/nn/modules/conv.h"

#include <cmath>

#include "ember/nn/init.h"

namespace ember::nn {

Conv2d::Conv2d(const Conv2dOptions& o)
    : options(o),
      weight(register_parameter(
          "weight", uninitialized({o.out_channels, o.in_channels / std::max<int64_t>(o.groups, 1),
                                   o.kernel_size[0], o.kernel_size[1]}))),
      bias(register_parameter("bias", o.bias ? uninitialized({o.out_channels}) : Tensor())) {
  EMBER_CHECK(o.groups > 0 && o.in_channels % o.groups == 0 && o.out_channels % o.groups == 0,
              "[Conv2d] in_channels (", o.in_channels, ") and out_channels (", o.out_channels,
              ") must be divisible by groups (", o.groups, ")");
  if (should_initialize()) reset_parameters();
}

void Conv2d::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight, bias, options.stride, options.padding, options.dilation, options.groups);
}

std::string Conv2d::extra_repr() const {
  auto pair = [](Pair p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; };
  std::string s = std::to_string(options.in_channels) + ", " +
                  std::to_string(options.out_channels) +
                  ", kernel_size=" + pair(options.kernel_size) + ", stride=" + pair(options.stride);
  if (options.padding != Pair{0, 0}) s += ", padding=" + pair(options.padding);
  if (options.dilation != Pair{1, 1}) s += ", dilation=" + pair(options.dilation);
  if (options.groups != 1) s += ", groups=" + std::to_string(options.groups);
  if (!options.bias) s += ", bias=False";
  return s;
}

std::shared_ptr<Module> Conv2d::clone_impl() const { return std::make_shared<Conv2d>(options); }

}  // namespace ember::nn
