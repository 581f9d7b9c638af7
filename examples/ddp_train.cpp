// The shortest complete DistributedDataParallel program: run it with
//   ember launch --nproc-per-node 2 example_ddp_train
// (or mpirun -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 example_ddp_train).
#include <iostream>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "ember/ember.h"

using namespace ember;
namespace dist = ember::distributed;

int main(int argc, char** argv) {
  dist::init_process_group("gloo", "env://");
  int rank = dist::get_rank(), world = dist::get_world_size();
  std::string root = argc > 1 ? argv[1] : data::datasets::kFashionMnistDir;
  auto train = std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{true});
  dist::DistributedSampler sampler(train->size(), world, rank, /*shuffle=*/true, /*seed=*/0);
  auto shard = std::make_shared<dist::SubsetDataset>(train, sampler.indices());
  data::DataLoader loader(shard, data::DataLoaderOptions().with_batch_size(32));

  dist::DDP model(nn::make<models::LeNet>());  // rank 0's weights on every rank
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
  int step = 0;
  for (const data::Example& batch : loader) {
    Tensor loss = nn::functional::cross_entropy(model.forward(batch.data), batch.target);
    opt.zero_grad();
    loss.backward();  // gradients averaged over the ranks when it returns
    opt.step();
    if (++step % 100 == 0 && rank == 0)
      std::cout << "step " << step << " loss " << loss.item<double>() << "\n";
    if (step == 300) break;  // a short demonstration (every rank stops at the same step)
  }
  dist::destroy_process_group();
  return 0;
}
