#include "ember/models/lenet.h"

#include "ember/ops/elementwise.h"
#include "ember/ops/pooling.h"

namespace ember::models {

LeNet::LeNet(int64_t num_classes)
    : conv1(register_module("conv1", nn::make<nn::Conv2d>(1, 6, 5))),
      conv2(register_module("conv2", nn::make<nn::Conv2d>(6, 16, 5))),
      fc1(register_module("fc1", nn::make<nn::Linear>(16 * 4 * 4, 120))),
      fc2(register_module("fc2", nn::make<nn::Linear>(120, 84))),
      fc3(register_module("fc3", nn::make<nn::Linear>(84, num_classes))),
      num_classes_(num_classes) {}

Tensor LeNet::forward(const Tensor& x) {
  Tensor h = max_pool2d(relu((*conv1)(x)), {2, 2});
  h = max_pool2d(relu((*conv2)(h)), {2, 2});
  h = h.flatten(1);
  h = relu((*fc1)(h));
  h = relu((*fc2)(h));
  return (*fc3)(h);
}

std::shared_ptr<nn::Module> LeNet::clone_impl() const {
  return std::make_shared<LeNet>(num_classes_);
}

MLP::MLP(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {
  EMBER_CHECK(sizes_.size() >= 2, "[MLP] needs at least an input and an output size");
  for (size_t i = 0; i + 1 < sizes_.size(); ++i)
    layers_.push_back(register_module("fc" + std::to_string(i + 1),
                                      nn::make<nn::Linear>(sizes_[i], sizes_[i + 1])));
}

Tensor MLP::forward(const Tensor& x) {
  Tensor h = x.reshape({x.size(0), -1});
  for (size_t i = 0; i < layers_.size(); ++i) {
    h = (*layers_[i])(h);
    if (i + 1 < layers_.size()) h = relu(h);
  }
  return h;
}

std::shared_ptr<nn::Module> MLP::clone_impl() const { return std::make_shared<MLP>(sizes_); }

}  // namespace ember::models
