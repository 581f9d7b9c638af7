// A model split across devices: the first part on the CPU, the second on the GPU, and the
// activation moved between them explicitly (gradients flow back through the copy).
#include <iostream>

#include "ember/ember.h"

using namespace ember;

class SplitModel : public nn::Module {
 public:
  explicit SplitModel(Device second)
      : first(register_module("first", nn::make<nn::Linear>(8, 16))),
        second_part(register_module("second", nn::make<nn::Linear>(16, 4))),
        second_device(second) {
    second_part->to(second_device);
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu(first->forward(x));                // on the CPU
    return second_part->forward(h.to(second_device));  // on the GPU
  }
  std::string name() const override { return "SplitModel"; }
  std::shared_ptr<nn::Linear> first, second_part;
  Device second_device;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override {
    return std::make_shared<SplitModel>(second_device);
  }
};

int main() {
  Device gpu = cuda::try_gpu();
  SplitModel model(gpu);
  Tensor x = randn({5, 8});
  Tensor target = randint(0, 4, {5}).to(gpu);
  Tensor loss = nn::functional::cross_entropy(model.forward(x), target);
  loss.backward();
  std::cout << "first part on " << model.first->weight.device() << ", grad on "
            << model.first->weight.grad().device() << "\n";
  std::cout << "second part on " << model.second_part->weight.device() << ", grad on "
            << model.second_part->weight.grad().device() << "\n";
  std::cout << "loss " << loss.item<double>() << "\n";
  return 0;
}
