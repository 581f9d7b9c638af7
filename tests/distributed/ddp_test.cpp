// DistributedDataParallel with ranks as threads over Gloo: N ranks with batch B/N end where one
// process with batch B ends; no_sync accumulates; unused parameters are named or handled.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "ember/distributed/ddp.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/distributed_sampler.h"
#include "tests/util/npy.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using testing::values;

constexpr int64_t kBatch = 12;

// The default generator is shared by the rank threads: seeding and drawing happen under a lock.
std::mutex random_mutex;

std::shared_ptr<nn::Module> make_model(uint64_t seed) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(seed);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 16), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(16, 3)});
  m->to(kFloat64);
  return m;
}

// The whole data set of step s: (kBatch, 4) inputs and (kBatch, 3) targets.
std::pair<Tensor, Tensor> batch(int step) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(1000 + step);
  return {randn({kBatch, 4}, kFloat64), randn({kBatch, 3}, kFloat64)};
}

std::vector<Tensor> train_single(int steps) {
  auto model = make_model(7);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = batch(s);
    opt.zero_grad();
    nn::functional::mse_loss(model->forward(x), y).backward();
    opt.step();
  }
  return model->parameters();
}

void expect_params_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::vector<double> x = values(a[i]), y = values(b[i]);
    for (size_t k = 0; k < x.size(); ++k) ASSERT_NEAR(x[k], y[k], tol) << "param " << i;
  }
}

TEST(DDP, NRanksWithBatchSlicesEqualOneProcessWithTheWholeBatch) {
  const int steps = 5;
  std::vector<Tensor> reference = train_single(steps);
  for (int world : {2, 3}) {
    for (bool view : {false, true}) {
      run_threads(world, [&](int rank) {
        // Ranks start from different weights: DDP's broadcast makes them rank 0's.
        DDPOptions options;
        options.gradient_as_bucket_view = view;
        options.first_bucket_mb = 0.0001;  // several buckets even for this small model
        DDP ddp(make_model(rank == 0 ? 7 : 99 + rank), options);
        EXPECT_GE(ddp.bucket_indices().size(), 2u);
        optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
        int64_t per = kBatch / world;
        for (int s = 0; s < steps; ++s) {
          auto [x, y] = batch(s);
          opt.zero_grad();
          Tensor out = ddp.forward(x.narrow(0, rank * per, per));
          nn::functional::mse_loss(out, y.narrow(0, rank * per, per)).backward();
          opt.step();
        }
        expect_params_equal(ddp.module()->parameters(), reference, 1e-10);
      });
    }
  }
}

TEST(DDP, EqualsPyTorchDDP) {
  std::string py = testing::torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  const int steps = 5;
  std::string dir = ::testing::TempDir() + "/ddp_oracle_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::vector<Tensor> start = make_model(7)->parameters();
  for (size_t i = 0; i < start.size(); ++i)
    testing::write_npy(dir + "/p" + std::to_string(i) + ".npy", start[i]);
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = batch(s);
    testing::write_npy(dir + "/x" + std::to_string(s) + ".npy", x);
    testing::write_npy(dir + "/y" + std::to_string(s) + ".npy", y);
  }
  std::string cmd = "timeout 120 " + py +
                    " " EMBER_SOURCE_DIR "/tests/distributed/torch_ddp_oracle.py " + dir + " " +
                    std::to_string(steps) + " " + std::to_string(21000 + ::getpid() % 5000);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<Tensor> torch_params;
  for (size_t i = 0; i < start.size(); ++i)
    torch_params.push_back(testing::read_npy(dir + "/out" + std::to_string(i) + ".npy"));
  std::filesystem::remove_all(dir);
  run_threads(2, [&](int rank) {
    DDP ddp(make_model(7));
    optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < steps; ++s) {
      auto [x, y] = batch(s);
      opt.zero_grad();
      nn::functional::mse_loss(ddp.forward(x.narrow(0, rank * 6, 6)), y.narrow(0, rank * 6, 6))
          .backward();
      opt.step();
    }
    expect_params_equal(ddp.module()->parameters(), torch_params, 1e-10);
  });
}

TEST(DDP, NoSyncAccumulatesLikeOneBigBatch) {
  // Two micro-batches per rank under no_sync, then a synchronised one: the average over ranks
  // of each rank's sum of three half-batch means is the sum of the three whole-batch means.
  auto model = make_model(7);
  std::vector<Tensor> expected_grads;
  {
    for (int m = 0; m < 3; ++m) {
      auto [x, y] = batch(m);
      nn::functional::mse_loss(model->forward(x), y).backward();
    }
    for (const Tensor& p : model->parameters()) expected_grads.push_back(p.grad());
  }
  run_threads(2, [&](int rank) {
    DDP ddp(make_model(7));
    for (int m = 0; m < 3; ++m) {
      auto [x, y] = batch(m);
      Tensor xs = x.narrow(0, rank * 6, 6), ys = y.narrow(0, rank * 6, 6);
      if (m < 2) {
        auto guard = ddp.no_sync();
        nn::functional::mse_loss(ddp.forward(xs), ys).backward();
      } else {
        nn::functional::mse_loss(ddp.forward(xs), ys).backward();
      }
    }
    std::vector<Tensor> grads;
    for (const Tensor& p : ddp.module()->parameters()) grads.push_back(p.grad());
    expect_params_equal(grads, expected_grads, 1e-10);
  });
}

// A model whose second layer is used only when asked.
class Branchy : public nn::Module {
 public:
  Branchy() {
    a = register_module("a", std::make_shared<nn::Linear>(4, 3));
    b = register_module("b", std::make_shared<nn::Linear>(4, 3));
    to(kFloat64);
  }
  Tensor forward(const Tensor& x) override {
    return use_b ? a->forward(x) + b->forward(x) : a->forward(x);
  }
  std::string name() const override { return "Branchy"; }
  std::shared_ptr<nn::Linear> a, b;
  bool use_b = true;

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override { return std::make_shared<Branchy>(); }
};

TEST(DDP, UnusedParameterIsNamedWithoutFindUnusedParameters) {
  run_threads(2, [](int rank) {
    std::unique_lock<std::mutex> lock(random_mutex);
    manual_seed(3);
    auto model = std::make_shared<Branchy>();
    lock.unlock();
    model->use_b = false;
    DDP ddp(model);
    auto [x, y] = batch(0);
    EXPECT_THROW_WITH(nn::functional::mse_loss(ddp.forward(x), y).backward(),
                      "parameter 'b.weight' (index 2) received no gradient");
  });
}

TEST(DDP, FindUnusedParametersHandlesAnUnusedBranch) {
  run_threads(2, [](int rank) {
    std::unique_lock<std::mutex> lock(random_mutex);
    manual_seed(3);
    auto model = std::make_shared<Branchy>();
    lock.unlock();
    DDPOptions options;
    options.find_unused_parameters = true;
    DDP ddp(model, options);
    auto [x, y] = batch(0);
    model->use_b = rank == 0;  // b is used by rank 0 only
    nn::functional::mse_loss(ddp.forward(x.narrow(0, rank * 6, 6)), y.narrow(0, rank * 6, 6))
        .backward();
    // b's gradient is rank 0's, averaged over 2 ranks (rank 1 contributed zeros).
    lock.lock();
    manual_seed(3);
    Branchy single;
    lock.unlock();
    Tensor out = single.forward(x.narrow(0, 0, 6));
    nn::functional::mse_loss(out, y.narrow(0, 0, 6)).backward();
    expect_params_equal({model->b->parameters()[0].grad()},
                        {single.b->parameters()[0].grad() / 2.0}, 1e-12);
  });
}

TEST(DDP, DifferentModelsAreNamed) {
  EXPECT_THROW_WITH(run_threads(2,
                                [](int rank) {
                                  std::unique_lock<std::mutex> lock(random_mutex);
                                  auto m = std::make_shared<nn::Sequential>(
                                      std::initializer_list<std::shared_ptr<nn::Module>>{
                                          std::make_shared<nn::Linear>(4, rank == 0 ? 3 : 5)});
                                  lock.unlock();
                                  DDP ddp(m);
                                }),
                    "parameter '0.weight' (index 0) has different shapes on rank 0 and rank 1");
}

TEST(DDP, CompressionHooksAreCloseToTheExactAverage) {
  std::vector<Tensor> reference = train_single(1);
  for (CommHook hook : {fp16_compress_hook(), bf16_compress_hook()}) {
    run_threads(2, [&](int rank) {
      DDP ddp(make_model(7));
      ddp.register_comm_hook(hook);
      optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
      auto [x, y] = batch(0);
      nn::functional::mse_loss(ddp.forward(x.narrow(0, rank * 6, 6)), y.narrow(0, rank * 6, 6))
          .backward();
      opt.step();
      expect_params_equal(ddp.module()->parameters(), reference, 5e-3);
    });
  }
}

TEST(DDP, HooksAreRemovedWithTheWrapper) {
  run_threads(2, [](int rank) {
    auto model = make_model(7);
    { DDP ddp(model); }
    auto [x, y] = batch(0);
    nn::functional::mse_loss(model->forward(x), y).backward();  // no DDP hook left to run
    EXPECT_TRUE(model->parameters()[0].grad().defined());
  });
}

}  // namespace
}  // namespace ember::distributed

namespace ember::distributed {
namespace {

TEST(DistributedSampler, EveryRankGetsTheSameCountAndTogetherEverySample) {
  for (bool drop_last : {false, true}) {
    std::vector<size_t> seen;
    size_t count = 0;
    for (int rank = 0; rank < 3; ++rank) {
      DistributedSampler s(10, 3, rank, /*shuffle=*/true, /*seed=*/5, drop_last);
      s.set_epoch(2);
      std::vector<size_t> mine = s.indices();
      EXPECT_EQ(mine.size(), drop_last ? 3u : 4u);
      if (rank == 0) count = mine.size();
      EXPECT_EQ(mine.size(), count);
      seen.insert(seen.end(), mine.begin(), mine.end());
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    EXPECT_EQ(seen.size(), drop_last ? 9u : 10u);
  }
  DistributedSampler a(10, 2, 0, true, 5), b(10, 2, 0, true, 5);
  b.set_epoch(1);
  EXPECT_NE(a.indices(), b.indices());  // a new permutation each epoch
}

// Three ranks take 2 batches of 2, the job restarts with two ranks: they split what is left of
// the epoch, and no sample is trained on twice but the one that pads the two shards to one count.
TEST(DistributedSampler, ResumesAnEpochWithAnotherWorldSize) {
  const size_t n = 23, batch = 2, batches = 2;
  std::multiset<size_t> seen;
  size_t position = 0;
  for (int rank = 0; rank < 3; ++rank) {
    DistributedSampler s(n, 3, rank, /*shuffle=*/true, /*seed=*/5);
    s.set_epoch(4);
    std::vector<size_t> mine = s.indices();
    seen.insert(mine.begin(), mine.begin() + batch * batches);
    position = s.position_after(batches, batch);
  }
  EXPECT_EQ(position, 12u);
  std::set<size_t> before(seen.begin(), seen.end());
  EXPECT_EQ(before.size(), 12u);
  size_t count = 0;
  for (int rank = 0; rank < 2; ++rank) {
    DistributedSampler s(n, 2, rank, true, 5);
    s.set_epoch(4);
    s.set_start(position);
    std::vector<size_t> mine = s.indices();
    EXPECT_EQ(mine.size(), 6u) << "11 samples left, padded to 6 each";
    EXPECT_EQ(s.size(), 6u);
    count += mine.size();
    for (size_t i : mine) EXPECT_FALSE(before.count(i)) << "sample " << i << " seen twice";
    seen.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(count, 12u);
  EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), n) << "every sample is trained on";
  // Resuming at position 0 is the epoch from its start; set_epoch resets the start.
  DistributedSampler fresh(n, 2, 1, true, 5), resumed(n, 2, 1, true, 5);
  fresh.set_epoch(4);
  resumed.set_epoch(4);
  resumed.set_start(7);
  resumed.set_epoch(4);
  EXPECT_EQ(fresh.indices(), resumed.indices());
  EXPECT_THROW_WITH(resumed.set_start(24), "past the end of the data set of 23 samples");
}

}  // namespace
}  // namespace ember::distributed
