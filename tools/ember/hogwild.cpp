#include "tools/ember/hogwild.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/multiprocessing/process.h"
#include "ember/multiprocessing/queue.h"

namespace ember::cli {
namespace {

namespace F = nn::functional;
namespace mp = ember::multiprocessing;

// Every `stride`-th example of `base`, starting at `first`.
class Shard final : public data::Dataset {
 public:
  Shard(std::shared_ptr<data::Dataset> base, size_t first, size_t stride)
      : base_(std::move(base)), first_(first), stride_(stride) {}
  size_t size() const override { return (base_->size() - first_ + stride_ - 1) / stride_; }
  data::Example get(size_t i) const override { return base_->get(first_ + i * stride_); }
  data::Example get_batch(const std::vector<size_t>& indices) const override {
    std::vector<size_t> mapped(indices.size());
    for (size_t k = 0; k < indices.size(); ++k) mapped[k] = first_ + indices[k] * stride_;
    return base_->get_batch(mapped);
  }

 private:
  std::shared_ptr<data::Dataset> base_;
  size_t first_, stride_;
};

}  // namespace

int train_hogwild(const TrainConfig& cfg, int nprocs, const std::string& out) {
  EMBER_CHECK(nprocs >= 1, "[train] expected --hogwild N with N >= 1, got ", nprocs);
  Device device = pick_device(cfg.device == "auto" ? "cpu" : cfg.device);
  EMBER_CHECK(device.is_cpu(), "[train] --hogwild trains on the CPU; got --device ", device);
  int threads = std::max(1, get_num_threads() / nprocs);
  manual_seed(cfg.seed);
  MnistSets sets = load_fashion_mnist(cfg.data, cfg.resize);
  const auto& train_set = sets.train;
  const auto& test_set = sets.test;
  std::shared_ptr<nn::Module> model = make_model(cfg.model, cfg.resize ? cfg.resize : 28);
  model->share_memory();
  std::cerr << "ember train: " << model->name() << " Hogwild over " << nprocs << " processes of "
            << threads << " CPU threads, " << train_set->size() << " training and "
            << test_set->size() << " test images, batch " << cfg.batch_size << ", SGD lr " << cfg.lr
            << " momentum " << cfg.momentum << "\n";

  mp::Queue results;
  double t0 = now();
  mp::spawn(nprocs, [&](int rank) {
    set_num_threads(threads);
    auto shard =
        std::make_shared<Shard>(train_set, static_cast<size_t>(rank), static_cast<size_t>(nprocs));
    // Each process has its own optimizer (its momentum) and gradients; the weights are shared.
    optim::SGD optimizer(model->parameters(),
                         optim::SGDOptions(cfg.lr).with_momentum(cfg.momentum));
    data::DataLoader loader(shard, data::DataLoaderOptions()
                                       .with_batch_size(static_cast<size_t>(cfg.batch_size))
                                       .with_shuffle()
                                       .with_seed(cfg.seed + static_cast<uint64_t>(rank))
                                       .with_workers(static_cast<size_t>(cfg.workers)));
    model->train();
    double loss_sum = 0;
    int64_t hits = 0, seen = 0;
    for (int64_t epoch = 0; epoch < cfg.epochs; ++epoch) {
      for (const data::Example& batch : loader) {
        Tensor logits = model->forward(batch.data);
        Tensor loss = F::cross_entropy(logits, batch.target);
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        NoGradGuard no_grad;
        loss_sum += loss.item<double>() * static_cast<double>(batch.target.size(0));
        hits += eq(argmax(logits.detach(), 1), batch.target).sum().item<int64_t>();
        seen += batch.target.size(0);
      }
    }
    results.put(mp::Value::List{loss_sum, hits, seen});
  });
  double train_seconds = now() - t0;

  double loss_sum = 0;
  int64_t hits = 0, seen = 0;
  for (int i = 0; i < nprocs; ++i) {
    mp::Value v = results.get(10.0);
    loss_sum += v.list()[0].to_double();
    hits += v.list()[1].to_int();
    seen += v.list()[2].to_int();
  }
  Evaluation last = evaluate(*model, *test_set, device, 512);
  double rate = static_cast<double>(seen) / train_seconds;
  std::printf(
      "hogwild %d processes, %lld epochs: train loss %.4f, train accuracy %.2f%%, test loss %.4f, "
      "test accuracy %.2f%%, %.2f s, %.0f samples/s\n",
      nprocs, static_cast<long long>(cfg.epochs), loss_sum / static_cast<double>(seen),
      100.0 * static_cast<double>(hits) / static_cast<double>(seen), last.loss, 100 * last.accuracy,
      train_seconds, rate);
  std::string model_path = (std::filesystem::path(out) / "model.safetensors").string();
  io::save(*model, model_path,
           {{"model", cfg.model},
            {"epochs", std::to_string(cfg.epochs)},
            {"test_accuracy", std::to_string(last.accuracy)}});
  nlohmann::json result = {{"device", device.str()},         {"hogwild", nprocs},
                           {"threads_per_process", threads}, {"epochs", cfg.epochs},
                           {"train_seconds", train_seconds}, {"samples_per_second", rate},
                           {"test_accuracy", last.accuracy}};
  std::cout << result.dump() << std::endl;
  return 0;
}

}  // namespace ember::cli
