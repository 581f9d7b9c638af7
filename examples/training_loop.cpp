// The guides' training loop: model and data on the device, forward, loss, backward, step.
#include <iostream>

#include "ember/ember.h"

using namespace ember;
namespace F = nn::functional;

int main(int argc, char** argv) {
  Device device = cuda::try_gpu();
  manual_seed(0);
  std::string root = argc > 1 ? argv[1] : data::datasets::kFashionMnistDir;
  auto train = std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{true});
  data::DataLoader loader(
      train, data::DataLoaderOptions().with_batch_size(128).with_shuffle().with_workers(1));
  auto model = nn::make<models::MLP>();
  model->to(device);
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  int step = 0;
  for (const data::Example& batch : loader) {
    Tensor x = batch.data.to(device, /*non_blocking=*/true), y = batch.target.to(device, true);
    Tensor loss = F::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (++step % 100 == 0) std::cout << "step " << step << " loss " << loss.item<double>() << "\n";
    if (step == 300) break;  // a short demonstration
  }
  return 0;
}
