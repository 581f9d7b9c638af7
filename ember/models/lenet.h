// LeNet-5 as in the PyTorch tutorial (parameter names conv1, conv2, fc1, fc2, fc3), for 28x28
// single-channel images: conv 6@5x5, max-pool 2, conv 16@5x5, max-pool 2, 256 -> 120 -> 84 -> 10.
#pragma once

#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"

namespace ember::models {

class LeNet : public nn::Module {
 public:
  explicit LeNet(int64_t num_classes = 10);
  Tensor forward(const Tensor& x) override;  // x (N, 1, 28, 28) -> logits (N, num_classes)
  std::string name() const override { return "LeNet"; }

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::Linear> fc1, fc2, fc3;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  int64_t num_classes_;
};

/// A multilayer perceptron 784 -> hidden... -> classes with ReLU between (fc1, fc2, ...).
class MLP : public nn::Module {
 public:
  explicit MLP(std::vector<int64_t> sizes = {784, 256, 256, 10});
  Tensor forward(const Tensor& x) override;  // x (N, ...) is flattened to (N, sizes[0])
  std::string name() const override { return "MLP"; }

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  std::vector<int64_t> sizes_;
  std::vector<std::shared_ptr<nn::Linear>> layers_;
};

}  // namespace ember::models
