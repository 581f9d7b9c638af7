// The guides' Hogwild program (torch.multiprocessing's mnist_hogwild): one model in shared memory,
// N processes each training it with its own optimizer on its share of the data, then join.
#include <iostream>

#include "ember/ember.h"

using namespace ember;
namespace F = nn::functional;
namespace mp = ember::multiprocessing;

int main(int argc, char** argv) {
  mp::init(argc, argv);
  std::string root = argc > 1 ? argv[1] : data::datasets::kFashionMnistDir;
  const int num_processes = 2;
  manual_seed(0);
  auto train = std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{true});
  auto test = std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{false});
  auto model = nn::make<models::LeNet>();
  model->share_memory();  // gradients are allocated later, separately in each process

  mp::spawn(num_processes, [&](int rank) {
    set_num_threads(std::max(1, get_num_threads() / num_processes));
    data::DataLoader loader(train,
                            data::DataLoaderOptions().with_batch_size(64).with_shuffle().with_seed(
                                static_cast<uint64_t>(rank)));
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
    int step = 0;
    for (const data::Example& batch : loader) {
      Tensor loss = F::cross_entropy(model->forward(batch.data), batch.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      if (++step == 300) break;  // a short demonstration: 300 steps per process
    }
  });

  NoGradGuard no_grad;
  model->eval();
  auto batch = test->get_batch([] {
    std::vector<size_t> idx(1000);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    return idx;
  }());
  double accuracy =
      eq(argmax(model->forward(batch.data), 1), batch.target).to(kFloat32).mean().item<double>();
  std::cout << "test accuracy after Hogwild training: " << 100 * accuracy << "%\n";
  return 0;
}
