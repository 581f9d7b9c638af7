// A DistributedDataParallel program that survives a lost rank: run it under the elastic agent,
//   ember launch --nproc-per-node 2 --max-restarts 3 example_elastic_train [CHECKPOINT_DIR]
// (on several machines: --nnodes 1:4 --rdzv-endpoint HOST:PORT --rdzv-id JOB on each, with the
// checkpoint on storage they share). When a rank dies, the agent restarts the group with the
// ranks that are left; each run resumes from the last checkpoint, with however many ranks it has.
#include <cstdlib>
#include <iostream>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "ember/distributed/error_file.h"
#include "ember/distributed/training_checkpoint.h"
#include "ember/ember.h"

using namespace ember;
namespace dist = ember::distributed;

int main(int argc, char** argv) {
  // record(): an exception's message reaches the agent's report of the job's failures.
  return dist::record([&] {
    dist::init_process_group("gloo", "env://");
    int rank = dist::get_rank(), world = dist::get_world_size();
    std::string dir = argc > 1 ? argv[1] : ".";
    auto train = std::make_shared<data::datasets::MNIST>(data::datasets::kFashionMnistDir,
                                                         data::datasets::MNISTOptions{true});
    manual_seed(0);
    dist::DDP model(nn::make<models::LeNet>());
    optim::SGD opt(model.parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
    dist::TrainingCheckpoint checkpoint(dir + "/elastic_train.safetensors", *model.module(), opt);
    dist::TrainingPosition at = checkpoint.load().value_or(dist::TrainingPosition{});
    if (rank == 0)
      std::cout << "restart " << std::getenv("TORCHELASTIC_RESTART_COUNT") << ": " << world
                << " ranks, resuming at epoch " << at.epoch << " step " << at.step << "\n";

    const size_t batch = 32;
    dist::DistributedSampler sampler(train->size(), world, rank, /*shuffle=*/true, /*seed=*/0);
    for (int64_t epoch = at.epoch; epoch < 2; ++epoch) {
      sampler.set_epoch(static_cast<uint64_t>(epoch));
      if (epoch == at.epoch) sampler.set_start(static_cast<size_t>(at.sample));  // part-way
      auto shard = std::make_shared<dist::SubsetDataset>(train, sampler.indices());
      data::DataLoader loader(shard, data::DataLoaderOptions().with_batch_size(batch));
      int64_t step = epoch == at.epoch ? at.step : 0;
      size_t batches = 0;
      for (const data::Example& b : loader) {
        Tensor loss = nn::functional::cross_entropy(model.forward(b.data), b.target);
        opt.zero_grad();
        loss.backward();
        opt.step();
        ++step;
        if (++batches % 100 == 0) {  // every rank calls save; rank 0 writes
          checkpoint.save(
              {epoch, step, static_cast<int64_t>(sampler.position_after(batches, batch))});
          if (rank == 0)
            std::cout << "epoch " << epoch << " step " << step << " loss " << loss.item<double>()
                      << "\n";
        }
      }
      checkpoint.save({epoch + 1, 0, 0});
    }
    dist::destroy_process_group();
    return 0;
  });
}
