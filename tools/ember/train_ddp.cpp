// `ember train --nproc N`: LeNet (or the MLP) on Fashion-MNIST with DistributedDataParallel over
// N local processes (Gloo). Without RANK in the environment it launches N copies of itself
// (as `ember launch` would); each copy trains on its DistributedSampler shard.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "ember/distributed/launch.h"
#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"
#include "tools/ember/training.h"

namespace ember::cli {
namespace {

namespace dist = ember::distributed;

int worker(const Args& args) {
  if (args.has("threads")) set_num_threads(static_cast<int>(args.integer("threads", 1, 1, 4096)));
  int64_t epochs = args.integer("epochs", 1, 1, 1000000);
  int64_t batch = args.integer("batch-size", 32, 1, int64_t{1} << 31);  // per rank
  double lr = args.number("lr", 0.01), momentum = args.number("momentum", 0.9);
  uint64_t seed = static_cast<uint64_t>(args.integer("seed", 0, 0));
  std::string root = args.str("data", data::datasets::kFashionMnistDir);

  dist::init_process_group("gloo", "env://");
  int rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(seed + static_cast<uint64_t>(rank));  // DDP's broadcast makes the weights rank 0's
  auto train_set =
      std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{true});
  dist::DDP model(make_model(args.str("model", "lenet")));
  optim::SGD opt(model.parameters(), optim::SGDOptions(lr).with_momentum(momentum));
  dist::DistributedSampler sampler(train_set->size(), world, rank, /*shuffle=*/true, seed);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    sampler.set_epoch(static_cast<uint64_t>(epoch));
    auto shard = std::make_shared<dist::SubsetDataset>(train_set, sampler.indices());
    data::DataLoader loader(shard,
                            data::DataLoaderOptions().with_batch_size(static_cast<size_t>(batch)));
    auto start = std::chrono::steady_clock::now();
    double loss_sum = 0;
    int64_t steps = 0;
    model.train();
    for (const data::Example& b : loader) {
      Tensor loss = nn::functional::cross_entropy(model.forward(b.data), b.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      ++steps;
    }
    dist::barrier();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rank == 0) {
      auto test_set =
          std::make_shared<data::datasets::MNIST>(root, data::datasets::MNISTOptions{false});
      Evaluation ev = evaluate(*model.module(), *test_set, Device(kCPU), 1000);
      std::cout << "{\"epoch\":" << epoch + 1 << ",\"nproc\":" << world
                << ",\"epoch_seconds\":" << seconds << ",\"train_loss\":" << loss_sum / steps
                << ",\"test_accuracy\":" << ev.accuracy << "}" << std::endl;
    }
  }
  dist::destroy_process_group();
  return 0;
}

}  // namespace

int train_ddp(int argc, char** argv) {
  Args args(argc, argv,
            {"nproc", "model", "data", "epochs", "batch-size", "lr", "momentum", "seed", "threads",
             "master-port"},
            {"help"});
  if (std::getenv("RANK") && std::getenv("WORLD_SIZE")) return worker(args);
  dist::LaunchOptions o;
  o.nproc_per_node = static_cast<int>(args.integer("nproc", 2, 1, 1024));
  std::random_device rd;
  o.master_port = static_cast<int>(args.integer("master-port", 20000 + rd() % 20000, 1, 65535));
  std::vector<std::string> command = {"/proc/self/exe", "train"};
  for (int i = 0; i < argc; ++i) command.push_back(argv[i]);
  std::string self(4096, '\0');
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  EMBER_CHECK(n > 0, "[train] cannot find this program's path to start its ranks");
  self.resize(static_cast<size_t>(n));
  command[0] = self;
  return dist::launch(o, command);
}

}  // namespace ember::cli
