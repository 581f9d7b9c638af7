// Inference with a temperature: softmax(logits / T) sharpens (T < 1) or softens (T > 1) the
// predicted distribution. Trains a few batches first so the example is self-contained.
#include <cstdio>
#include <iostream>

#include "ember/ember.h"

using namespace ember;

int main(int argc, char** argv) {
  Device device = cuda::try_gpu();
  std::string root = argc > 1 ? argv[1] : data::datasets::kFashionMnistDir;
  manual_seed(1);
  data::datasets::MNIST train(root, {true}), test(root, {false});
  auto model = nn::make<models::LeNet>();
  model->to(device);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).with_momentum(0.9));
  for (size_t start = 0; start < 64 * 200; start += 64) {
    std::vector<size_t> idx;
    for (size_t i = start; i < start + 64; ++i) idx.push_back(i);
    data::Example b = train.get_batch(idx);
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(b.data.to(device)), b.target.to(device))
        .backward();
    opt.step();
  }
  model->eval();
  NoGradGuard no_grad;
  std::vector<size_t> idx;
  for (size_t i = 0; i < 1000; ++i) idx.push_back(i);
  data::Example b = test.get_batch(idx);
  Tensor logits = model->forward(b.data.to(device));
  for (double t : {0.3, 0.6, 1.0, 2.0}) {
    Tensor probs = softmax(logits / t, 1);
    auto [p, label] = probs.max(1);
    double accuracy = eq(label.cpu(), b.target).to(kFloat32).mean().item<double>();
    std::printf("temperature %.1f: accuracy %.1f%%, mean confidence %.3f\n", t, 100 * accuracy,
                p.mean().item<double>());
  }
  return 0;
}
