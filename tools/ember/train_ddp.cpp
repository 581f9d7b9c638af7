// `ember train --nproc N`: LeNet (or the MLP) on Fashion-MNIST with DistributedDataParallel over
// N local processes (Gloo). Without RANK in the environment it launches N copies of itself
// (as `ember launch` would); each copy trains on its DistributedSampler shard.
#include "tools/ember/train_ddp.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "ember/distributed/launch.h"
#include "ember/ember.h"
#include "tools/ember/train_resume.h"

namespace ember::cli {
namespace {

namespace dist = ember::distributed;

int worker(const TrainConfig& cfg) {
  double started = wall_time();
  dist::init_process_group("gloo", "env://");
  int rank = dist::get_rank(), world = dist::get_world_size();
  // Like torchrun's OMP_NUM_THREADS=1 for one rank per core: the ranks share the cores.
  if (cfg.threads == 0)
    set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / world));
  manual_seed(cfg.seed + static_cast<uint64_t>(rank));  // DDP's broadcast makes them rank 0's
  MnistSets sets = load_fashion_mnist(cfg.data, cfg.resize);
  dist::DDP model(make_model(cfg.model, cfg.resize ? cfg.resize : 28));
  optim::SGD opt(model.parameters(), optim::SGDOptions(cfg.lr).with_momentum(cfg.momentum));
  dist::DistributedSampler sampler(sets.train->size(), world, rank, /*shuffle=*/true, cfg.seed);
  if (rank == 0)
    std::cerr << "ember train: " << model.module()->name() << " with DistributedDataParallel over "
              << world << " processes (gloo) of " << get_num_threads() << " CPU threads, "
              << sets.train->size() << " training and " << sets.test->size()
              << " test images, batch " << cfg.batch_size << " per rank, SGD lr " << cfg.lr
              << " momentum " << cfg.momentum << "\n";
  ResumableRun run(cfg, *model.module(), opt, started);
  double train_seconds = 0;
  int64_t epochs_run = 0;
  Evaluation last{};
  for (int64_t epoch = run.first_epoch(); epoch < cfg.epochs; ++epoch, ++epochs_run) {
    run.begin_epoch(sampler, epoch);
    auto shard = std::make_shared<dist::SubsetDataset>(sets.train, sampler.indices());
    data::DataLoader loader(shard, data::DataLoaderOptions()
                                       .with_batch_size(static_cast<size_t>(cfg.batch_size))
                                       .with_workers(static_cast<size_t>(cfg.workers)));
    model.train();
    double t0 = now(), loss_sum = 0;
    int64_t seen = 0;
    size_t batches = 0;
    for (const data::Example& b : loader) {
      Tensor loss = nn::functional::cross_entropy(model.forward(b.data), b.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>() * static_cast<double>(b.target.size(0));
      seen += b.target.size(0);
      run.after_step(sampler, ++batches);
    }
    run.end_epoch(epoch);
    dist::barrier();
    double seconds = now() - t0;
    train_seconds += seconds;
    if (rank == 0) {
      last = evaluate(*model.module(), *sets.test, Device(kCPU), 512);
      std::printf(
          "epoch %lld: train loss %.4f (rank 0), test loss %.4f, test accuracy %.2f%%, %.2f s, "
          "%.0f samples/s\n",
          static_cast<long long>(epoch + 1),
          loss_sum / static_cast<double>(std::max<int64_t>(1, seen)), last.loss,
          100 * last.accuracy, seconds, static_cast<double>(seen * world) / seconds);
      std::fflush(stdout);
    }
  }
  if (rank == 0 && run.first_epoch() >= cfg.epochs)  // resumed after the last epoch
    last = evaluate(*model.module(), *sets.test, Device(kCPU), 512);
  run.finish(last.accuracy);
  if (rank == 0) {
    std::filesystem::create_directories(cfg.out);
    io::save(*model.module(), (std::filesystem::path(cfg.out) / "model.safetensors").string(),
             {{"model", cfg.model},
              {"epochs", std::to_string(cfg.epochs)},
              {"test_accuracy", std::to_string(last.accuracy)}});
    nlohmann::json result = {
        {"device", "cpu"},
        {"nproc", world},
        {"epochs", cfg.epochs},
        {"train_seconds", train_seconds},
        {"epoch_seconds", train_seconds / static_cast<double>(std::max<int64_t>(1, epochs_run))},
        {"samples_per_second",
         static_cast<double>(sets.train->size()) * static_cast<double>(epochs_run) / train_seconds},
        {"restart_count", restart_count()},
        {"test_accuracy", last.accuracy}};
    std::cout << result.dump() << std::endl;
  }
  dist::destroy_process_group();
  return 0;
}

}  // namespace

bool is_rank() { return std::getenv("RANK") && std::getenv("WORLD_SIZE"); }

int train_ddp(const TrainConfig& cfg, int argc, char** argv) {
  return is_rank() ? worker(cfg) : launch_ranks(cfg, argc, argv);
}

int launch_ranks(const TrainConfig& cfg, int argc, char** argv) {
  dist::LaunchOptions o;
  o.nproc_per_node = cfg.nproc;
  // Below Linux's ephemeral ports (32768+), where other programs' connections would take it.
  std::random_device rd;
  o.master_port = cfg.master_port > 0 ? cfg.master_port : 20000 + static_cast<int>(rd() % 12000);
  std::string self(4096, '\0');
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  EMBER_CHECK(n > 0, "[train] cannot find this program's path to start its ranks");
  self.resize(static_cast<size_t>(n));
  std::vector<std::string> command = {self, "train"};
  command.insert(command.end(), argv, argv + argc);
  return dist::launch(o, command);
}

}  // namespace ember::cli
