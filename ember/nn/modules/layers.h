// The parameter-free layers: activations, pooling, flatten, dropout.
#pragma once

#include <optional>
#include <string>

#include "ember/nn/module.h"
#include "ember/ops/conv.h"

namespace ember::nn {

/// A layer without parameters: its forward is a function of the input alone.
#define EMBER_SIMPLE_LAYER(Name)                                                             \
  class Name : public Module {                                                               \
   public:                                                                                   \
    Name() = default;                                                                        \
    Tensor forward(const Tensor& x) override;                                                \
    std::string name() const override { return #Name; }                                      \
                                                                                             \
   protected:                                                                                \
    std::shared_ptr<Module> clone_impl() const override { return std::make_shared<Name>(); } \
  };
EMBER_SIMPLE_LAYER(ReLU)
EMBER_SIMPLE_LAYER(Sigmoid)
EMBER_SIMPLE_LAYER(Tanh)
#undef EMBER_SIMPLE_LAYER

/// GELU: x * Phi(x), exact ("none") or with the tanh approximation ("tanh").
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "GELU"; }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
  const std::string approximate;

 protected:
  std::shared_ptr<Module> clone_impl() const override {
    return std::make_shared<GELU>(approximate);
  }
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Softmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
  const int64_t dim;

 protected:
  std::shared_ptr<Module> clone_impl() const override { return std::make_shared<Softmax>(dim); }
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "LogSoftmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim); }
  const int64_t dim;

 protected:
  std::shared_ptr<Module> clone_impl() const override { return std::make_shared<LogSoftmax>(dim); }
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                     Pair padding = {0, 0}, Pair dilation = {1, 1}, bool ceil_mode = false);
  explicit MaxPool2d(int64_t kernel_size) : MaxPool2d(Pair{kernel_size, kernel_size}) {}
  Tensor forward(const Tensor& x) override;
  // The output and, per output element, the flat index (within its plane) of the max it took.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x);
  std::string name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;
  const Pair kernel_size, stride, padding, dilation;
  const bool ceil_mode;
  // Whether Python's module call returns (output, indices), as torch.nn.MaxPool2d's flag.
  bool return_indices = false;

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Pair kernel_size, std::optional<Pair> stride = std::nullopt,
                     Pair padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);
  explicit AvgPool2d(int64_t kernel_size) : AvgPool2d(Pair{kernel_size, kernel_size}) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;
  const Pair kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

/// Global or adaptive average pooling to a fixed output size, whatever the input's (ResNet's head).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Pair output_size) : output_size(output_size) {}
  explicit AdaptiveAvgPool2d(int64_t output_size)
      : AdaptiveAvgPool2d(Pair{output_size, output_size}) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;
  const Pair output_size;

 protected:
  std::shared_ptr<Module> clone_impl() const override {
    return std::make_shared<AdaptiveAvgPool2d>(output_size);
  }
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) override { return x.flatten(start_dim, end_dim); }
  std::string name() const override { return "Flatten"; }
  std::string extra_repr() const override {
    return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
  }
  const int64_t start_dim, end_dim;

 protected:
  std::shared_ptr<Module> clone_impl() const override {
    return std::make_shared<Flatten>(start_dim, end_dim);
  }
};

/// Zeroes elements with probability p in training mode; the identity in evaluation mode.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Dropout"; }
  std::string extra_repr() const override;
  const double p;

 protected:
  std::shared_ptr<Module> clone_impl() const override { return std::make_shared<Dropout>(p); }
};

}  // namespace ember::nn
