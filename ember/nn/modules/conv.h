// nn::Conv2d, with PyTorch's initialisation.
#pragma once

#include "ember/nn/module.h"
#include "ember/ops/conv.h"

namespace ember::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Pair kernel_size)
      : in_channels(in_channels), out_channels(out_channels), kernel_size(kernel_size) {}
  Conv2dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : Conv2dOptions(in_channels, out_channels, Pair{kernel_size, kernel_size}) {}
  int64_t in_channels, out_channels;
  Pair kernel_size;
  Pair stride{1, 1};
  Pair padding{0, 0};
  Pair dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
  Conv2dOptions& with_stride(int64_t s) {
    stride = {s, s};
    return *this;
  }
  Conv2dOptions& with_padding(int64_t p) {
    padding = {p, p};
    return *this;
  }
  Conv2dOptions& with_dilation(int64_t d) {
    dilation = {d, d};
    return *this;
  }
  Conv2dOptions& with_groups(int64_t g) {
    groups = g;
    return *this;
  }
  Conv2dOptions& with_bias(bool b) {
    bias = b;
    return *this;
  }
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : Conv2d(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Conv2d"; }
  std::string extra_repr() const override;
  void reset_parameters();

  const Conv2dOptions options;
  Tensor& weight;  // (out, in / groups, kH, kW)
  Tensor& bias;    // (out) or undefined

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
