// Batch norm under distributed training, ranks as threads over Gloo: SyncBatchNorm's outputs,
// gradients and running statistics equal single-process batch norm on the concatenated batch
// (unequal per-rank batches included); convert_sync_batchnorm swaps every BatchNorm of a model,
// ResNet-18 included, keeping its tensors; DDP + SyncBatchNorm trains as one process with the
// whole batch; DDP's broadcast_buffers hands rank 0's running statistics to every rank.
#include <gtest/gtest.h>

#include <mutex>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/sync_batch_norm.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using testing::all_close;

// The default generator is shared by the rank threads: seeding and drawing happen under a lock.
std::mutex random_mutex;

Tensor seeded_randn(const Shape& s, uint64_t seed) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(seed);
  return randn(s, kFloat64);
}

TEST(SyncBatchNorm, EqualsBatchNormOnTheConcatenatedBatch) {
  for (int world : {2, 3}) {
    // Rank r holds r + 2 samples: unequal batches.
    std::vector<int64_t> sizes, starts;
    int64_t total = 0;
    for (int r = 0; r < world; ++r) {
      starts.push_back(total);
      sizes.push_back(r + 2);
      total += r + 2;
    }
    Tensor x = seeded_randn({total, 3, 4, 5}, 1) * 2 + 1;
    Tensor g = seeded_randn({total, 3, 4, 5}, 2);
    Tensor w0 = seeded_randn({3}, 3), b0 = seeded_randn({3}, 4);
    // One process, the whole batch.
    Tensor xr = x.clone().requires_grad_(), w = w0.clone().requires_grad_(),
           b = b0.clone().requires_grad_();
    Tensor rm = zeros({3}, kFloat64), rv = ones({3}, kFloat64);
    Tensor y = batch_norm(xr, rm, rv, w, b, /*training=*/true);
    (y * g).sum().backward();

    std::mutex mutex;
    Tensor gw_sum = zeros({3}, kFloat64), gb_sum = zeros({3}, kFloat64);
    run_threads(world, [&](int rank) {
      Tensor xs = x.narrow(0, starts[rank], sizes[rank]).clone().requires_grad_();
      Tensor ws = w0.clone().requires_grad_(), bs = b0.clone().requires_grad_();
      Tensor rms = zeros({3}, kFloat64), rvs = ones({3}, kFloat64);
      Tensor ys = sync_batch_norm(xs, rms, rvs, ws, bs, 0.1, 1e-5, default_group_ptr());
      (ys * g.narrow(0, starts[rank], sizes[rank])).sum().backward();
      EXPECT_TRUE(all_close(ys, y.detach().narrow(0, starts[rank], sizes[rank]), 1e-10, 1e-10))
          << "rank " << rank << " of " << world << ": output";
      EXPECT_TRUE(
          all_close(xs.grad(), xr.grad().narrow(0, starts[rank], sizes[rank]), 1e-10, 1e-10))
          << "rank " << rank << " of " << world << ": input gradient";
      EXPECT_TRUE(all_close(rms, rm, 1e-12, 1e-12)) << "running mean";
      EXPECT_TRUE(all_close(rvs, rv, 1e-12, 1e-12)) << "running var";
      std::lock_guard<std::mutex> lock(mutex);
      gw_sum.add_(ws.grad());
      gb_sum.add_(bs.grad());
    });
    // Each rank's weight and bias gradients are its part of the whole batch's.
    EXPECT_TRUE(all_close(gw_sum, w.grad(), 1e-10, 1e-10)) << world << " ranks: weight gradient";
    EXPECT_TRUE(all_close(gb_sum, b.grad(), 1e-10, 1e-10)) << world << " ranks: bias gradient";
  }
}

TEST(SyncBatchNorm, ModuleSyncsInTrainingOnlyAndAGroupOfOneIsPlainBatchNorm) {
  run_threads(2, [&](int rank) {
    SyncBatchNorm sbn(2);
    nn::BatchNorm2d bn(2);
    Tensor x = seeded_randn({2 + rank, 2, 3, 3}, 10 + static_cast<uint64_t>(rank)).to(kFloat32);
    sbn.forward(x);
    EXPECT_EQ(sbn.num_batches_tracked.item<int64_t>(), 1);
    EXPECT_FALSE(all_close(sbn.running_mean, x.mean({0, 2, 3}) * 0.1, 1e-6, 1e-6))
        << "the running mean is the union's, not this rank's";
    sbn.eval();
    bn.eval();
    bn.running_mean.copy_(sbn.running_mean);
    bn.running_var.copy_(sbn.running_var);
    EXPECT_TRUE(all_close(sbn.forward(x), bn.forward(x), 1e-6, 1e-6)) << "evaluation: no sync";
    EXPECT_THROW_WITH(sbn.forward(ones({4})), "[SyncBatchNorm] expected at least 2D input");
  });
  run_threads(1, [&](int) {
    SyncBatchNorm sbn(3);
    nn::BatchNorm1d bn(3);
    Tensor x = seeded_randn({5, 3}, 20).to(kFloat32);
    EXPECT_TRUE(all_close(sbn.forward(x), bn.forward(x), 1e-6, 1e-6));
    EXPECT_TRUE(all_close(sbn.running_var, bn.running_var, 1e-6, 1e-6));
  });
}

std::shared_ptr<nn::Module> conv_bn_model() {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(5);
  auto m = nn::make<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      nn::make<nn::Conv2d>(nn::Conv2dOptions(2, 4, 3).with_padding(1)),
      nn::make<nn::BatchNorm2d>(4), nn::make<nn::ReLU>(), nn::make<nn::Flatten>(),
      nn::make<nn::Linear>(4 * 5 * 5, 3), nn::make<nn::BatchNorm1d>(3)});
  m->to(kFloat64);
  return m;
}

TEST(SyncBatchNorm, ConvertSwapsEveryBatchNormAndKeepsItsTensors) {
  auto model = conv_bn_model();
  auto bn = std::dynamic_pointer_cast<nn::BatchNorm>(
      (*std::dynamic_pointer_cast<nn::Sequential>(model))[1]);
  model->eval();
  auto converted = SyncBatchNorm::convert_sync_batchnorm(model);
  EXPECT_EQ(converted, model) << "the root is not a batch norm: converted in place";
  auto seq = std::dynamic_pointer_cast<nn::Sequential>(converted);
  auto sbn = std::dynamic_pointer_cast<SyncBatchNorm>((*seq)[1]);
  ASSERT_NE(sbn, nullptr);
  EXPECT_NE(std::dynamic_pointer_cast<SyncBatchNorm>((*seq)[5]), nullptr);
  EXPECT_EQ(sbn->weight.data_ptr(), bn->weight.data_ptr()) << "the same tensors";
  EXPECT_EQ(sbn->running_var.data_ptr(), bn->running_var.data_ptr());
  EXPECT_FALSE(sbn->is_training()) << "the training mode carries over";
  EXPECT_EQ(converted->state_dict().size(), conv_bn_model()->state_dict().size());
  // A bare batch norm is replaced and returned.
  auto single = SyncBatchNorm::convert_sync_batchnorm(nn::make<nn::BatchNorm1d>(3));
  EXPECT_EQ(single->name(), "SyncBatchNorm");
  // ResNet-18: its 20 batch norms, its handles to them included.
  auto resnet = models::resnet18_fashion_mnist(28);
  SyncBatchNorm::convert_sync_batchnorm(resnet);
  int syncs = 0;
  for (auto& [name, m] : resnet->named_modules()) {
    syncs += m->name() == "SyncBatchNorm";
    EXPECT_NE(m->name(), "BatchNorm2d") << name;
  }
  EXPECT_EQ(syncs, 20);
  EXPECT_EQ(resnet->bn1->name(), "SyncBatchNorm");
  EXPECT_EQ(resnet->clone()->state_dict().size(), 122u);
}

// DDP over ranks with a model converted to SyncBatchNorm takes the steps one process takes with
// the whole batch and plain batch norm (equal batches: DDP averages the ranks' gradients).
TEST(SyncBatchNorm, DDPWithSyncBatchNormTrainsAsOneProcess) {
  const int steps = 3, world = 2;
  const int64_t per = 3;
  auto data = [](int s) {
    return std::make_pair(seeded_randn({per * world, 2, 5, 5}, 100 + static_cast<uint64_t>(s)),
                          seeded_randn({per * world, 3}, 200 + static_cast<uint64_t>(s)));
  };
  auto single = conv_bn_model();
  optim::SGD opt(single->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = data(s);
    opt.zero_grad();
    nn::functional::mse_loss(single->forward(x), y).backward();
    opt.step();
  }
  run_threads(world, [&](int rank) {
    DDP ddp(SyncBatchNorm::convert_sync_batchnorm(conv_bn_model()));
    optim::SGD ropt(ddp.parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < steps; ++s) {
      auto [x, y] = data(s);
      ropt.zero_grad();
      nn::functional::mse_loss(ddp.forward(x.narrow(0, rank * per, per)),
                               y.narrow(0, rank * per, per))
          .backward();
      ropt.step();
    }
    auto mine = ddp.module()->state_dict(), theirs = single->state_dict();
    ASSERT_EQ(mine.size(), theirs.size());
    for (size_t i = 0; i < mine.size(); ++i)
      EXPECT_TRUE(all_close(mine[i].second.to(kFloat64), theirs[i].second.to(kFloat64), 1e-9, 1e-9))
          << "rank " << rank << ": " << mine[i].first;
  });
}

// Without SyncBatchNorm each rank updates its running statistics from its own batch; with
// broadcast_buffers (the default) every forward first takes rank 0's.
TEST(DDP, BroadcastBuffersHandsRankZerosRunningStatisticsToEveryRank) {
  for (bool broadcast : {true, false}) {
    run_threads(2, [&](int rank) {
      auto model = conv_bn_model();
      DDPOptions options;
      options.broadcast_buffers = broadcast;
      DDP ddp(model, options);  // construction broadcasts parameters and buffers
      auto bn = std::dynamic_pointer_cast<nn::BatchNorm>(
          (*std::dynamic_pointer_cast<nn::Sequential>(model))[1]);
      Tensor x1 = seeded_randn({3, 2, 5, 5}, 300 + static_cast<uint64_t>(rank));
      Tensor x2 = seeded_randn({3, 2, 5, 5}, 400 + static_cast<uint64_t>(rank));
      ddp.forward(x1);
      Tensor own = bn->running_mean.clone();
      // What rank 0 holds now; every rank reads it from the same broadcast.
      Tensor rank0 = own.clone();
      distributed::broadcast(rank0, 0);
      ddp.forward(x2);
      Tensor batch_mean;
      {
        NoGradGuard no_grad;
        Tensor h = (*std::dynamic_pointer_cast<nn::Sequential>(model))[0]->forward(x2);
        batch_mean = h.mean({0, 2, 3});
      }
      Tensor start = broadcast ? rank0 : own;
      EXPECT_TRUE(all_close(bn->running_mean, start * 0.9 + batch_mean * 0.1, 1e-10, 1e-10))
          << "rank " << rank << (broadcast ? " with" : " without") << " broadcast_buffers";
    });
  }
}

}  // namespace
}  // namespace ember::distributed
