// Mixed precision under DistributedDataParallel (ranks as threads over Gloo): GradScaler over the
// averaged scaled gradients equals DDP without it, an inf on one rank makes every rank skip the
// step and back off alike, gradient accumulation under no_sync, and autocast in the forward.
#include <gtest/gtest.h>

#include <limits>
#include <mutex>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

constexpr int64_t kBatch = 8;
std::mutex random_mutex;  // the rank threads share the default generator

std::shared_ptr<nn::Module> make_model() {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(11);
  return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 16), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(16, 3)});
}

std::pair<Tensor, Tensor> batch(int step) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(2000 + step);
  return {randn({kBatch, 4}), randn({kBatch, 3})};
}

// Trains DDP over two ranks; `scaled`: through a GradScaler (scale a power of two). Returns rank
// 0's parameters and every rank's scale after each update.
std::vector<Tensor> train(bool scaled, int steps, int poison_step, int micro_batches,
                          std::vector<std::vector<double>>* scales = nullptr) {
  std::vector<Tensor> out;
  std::mutex m;
  if (scales) scales->assign(2, {});
  run_threads(2, [&](int rank) {
    DDP ddp(make_model());
    optim::Adam opt(ddp.parameters(), optim::AdamOptions(1e-2));
    amp::GradScaler scaler(
        amp::GradScalerOptions().with_init_scale(1024).with_growth_interval(2).with_enabled(
            scaled));
    int64_t per = kBatch / 2 / micro_batches;
    for (int s = 0; s < steps; ++s) {
      auto [x, y] = batch(s);
      // An inf in rank 1's input: its gradients become inf/NaN, and the all-reduce spreads them.
      if (s == poison_step && rank == 1)
        x.select(0, rank * per * micro_batches).fill_(std::numeric_limits<double>::infinity());
      opt.zero_grad();
      for (int mb = 0; mb < micro_batches; ++mb) {
        int64_t at = (rank * micro_batches + mb) * per;
        auto loss = [&] {
          return nn::functional::mse_loss(ddp.forward(x.narrow(0, at, per)), y.narrow(0, at, per)) /
                 micro_batches;
        };
        if (mb + 1 < micro_batches) {
          auto no_sync = ddp.no_sync();
          scaler.scale(loss()).backward();
        } else {
          scaler.scale(loss()).backward();
        }
      }
      scaler.step(opt);
      scaler.update();
      std::lock_guard<std::mutex> lock(m);
      if (scales) (*scales)[static_cast<size_t>(rank)].push_back(scaler.get_scale());
    }
    std::lock_guard<std::mutex> lock(m);
    if (rank == 0)
      for (const Tensor& p : ddp.module()->parameters()) out.push_back(p.detach().clone());
  });
  return out;
}

void expect_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(testing::all_close(a[i], b[i], 0, 0)) << i;
}

TEST(DDPAmp, GradScalerOverDDPEqualsDDPWithoutIt) {
  expect_equal(train(true, 4, -1, 1), train(false, 4, -1, 1));
}

TEST(DDPAmp, GradientAccumulationUnderNoSyncWithTheScaler) {
  expect_equal(train(true, 3, -1, 2), train(false, 3, -1, 2));
}

TEST(DDPAmp, AnInfOnOneRankMakesEveryRankSkipAndBackOff) {
  std::vector<std::vector<double>> scales;
  std::vector<Tensor> poisoned = train(true, 4, 2, 1, &scales);
  EXPECT_EQ(scales[0], scales[1]);
  EXPECT_EQ(scales[0], (std::vector<double>{1024, 2048, 1024, 1024}));
  for (const Tensor& p : poisoned)
    EXPECT_TRUE(isfinite(p).all().item<bool>()) << "a skipped step must leave no inf behind";
}

TEST(DDPAmp, AutocastForwardWithTheScalerTracksFloat32Training) {
  // One process, float32, the whole batch.
  auto single = make_model();
  optim::SGD ref(single->parameters(), optim::SGDOptions(0.1));
  for (int s = 0; s < 3; ++s) {
    auto [x, y] = batch(s);
    ref.zero_grad();
    nn::functional::mse_loss(single->forward(x), y).backward();
    ref.step();
  }
  std::vector<Tensor> reference = single->parameters(), mixed;
  run_threads(2, [&](int rank) {
    DDP ddp(make_model());
    optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1));
    amp::GradScaler scaler(amp::GradScalerOptions().with_init_scale(1024));
    int64_t per = kBatch / 2;
    for (int s = 0; s < 3; ++s) {
      auto [x, y] = batch(s);
      opt.zero_grad();
      Tensor loss;
      {
        amp::autocast guard(kCPU);
        Tensor out = ddp.forward(x.narrow(0, rank * per, per));
        EXPECT_EQ(out.dtype(), kBFloat16);
        loss = nn::functional::mse_loss(out, y.narrow(0, rank * per, per));
        EXPECT_EQ(loss.dtype(), kFloat32);
      }
      scaler.scale(loss).backward();
      EXPECT_TRUE(scaler.step(opt));
      scaler.update();
    }
    if (rank == 0)
      for (const Tensor& p : ddp.module()->parameters()) {
        EXPECT_EQ(p.dtype(), kFloat32);
        mixed.push_back(p.detach().clone());
      }
  });
  ASSERT_EQ(mixed.size(), reference.size());
  // Three SGD steps from bfloat16 activations: within bfloat16's precision of float32 training.
  for (size_t i = 0; i < mixed.size(); ++i)
    EXPECT_TRUE(testing::all_close(mixed[i], reference[i], 2e-2, 2e-3)) << i;
}

}  // namespace
}  // namespace ember::distributed
