// Hogwild: a module shared with 2 processes, each with its own optimizer and half the data, trains
// as well as one process does (within 1 point of accuracy).
#include "ember/multiprocessing/process.h"
#include "tests/util/test_util.h"

namespace ember::multiprocessing {
namespace {

namespace F = nn::functional;

// 10 Gaussian clusters in 20 dimensions: easy to separate, so both runs end near the top.
struct Blobs {
  Tensor x, y;
};
Blobs make_blobs(int64_t n) {
  manual_seed(11);
  Tensor centers = randn({10, 20}) * 3;
  Tensor y = randint(0, 10, {n});
  Tensor x = index_select(centers, 0, y) + randn({n, 20});
  return {x, y};
}

std::shared_ptr<nn::Module> make_mlp() {
  manual_seed(5);
  return nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Linear>(20, 64), nn::make<nn::ReLU>(), nn::make<nn::Linear>(64, 10)});
}

// Trains on every `stride`-th example from `first`, batch 32, SGD.
void train_part(nn::Module& model, const Blobs& data, int64_t first, int64_t stride) {
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.05).with_momentum(0.9));
  Tensor idx = arange(first, data.x.size(0), stride, TensorOptions(kInt64));
  for (int64_t b = 0; b + 32 <= idx.size(0); b += 32) {
    Tensor rows = idx.narrow(0, b, 32);
    Tensor loss = F::cross_entropy(model.forward(index_select(data.x, 0, rows)),
                                   index_select(data.y, 0, rows));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

double accuracy(nn::Module& model, const Blobs& data) {
  NoGradGuard no_grad;
  return eq(argmax(model.forward(data.x), 1), data.y).to(kFloat32).mean().item<double>();
}

TEST(Hogwild, TwoProcessesTrainASharedModuleAsWellAsOne) {
  Blobs train = make_blobs(4000), test = make_blobs(2000);
  auto single = make_mlp();
  train_part(*single, train, 0, 1);
  double single_acc = accuracy(*single, test);

  auto shared = make_mlp();
  shared->share_memory();
  Tensor before = shared->parameters()[0].clone();
  spawn(2, [&](int rank) {
    set_num_threads(1);
    train_part(*shared, train, rank, 2);
  });
  EXPECT_FALSE(shared->parameters()[0].equal(before));  // the children's updates are here
  double hogwild_acc = accuracy(*shared, test);
  EXPECT_GT(single_acc, 0.5);
  EXPECT_NEAR(hogwild_acc, single_acc, 0.01)
      << "one process " << single_acc << ", Hogwild " << hogwild_acc;
}

}  // namespace
}  // namespace ember::multiprocessing
