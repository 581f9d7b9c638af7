// FullyShardedDataParallel with ranks as threads over Gloo: N ranks with batch B/N, each holding
// 1/N of the parameters, end where one process with batch B ends, under every sharding strategy,
// with units nested, frozen parameters beside trainable ones, gradient accumulation, mixed
// precision, full state dicts and gradient clipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "ember/distributed/distributed.h"
#include "ember/distributed/fsdp.h"
#include "tests/util/test_util.h"

namespace ember::distributed {
namespace {

using testing::values;

constexpr int64_t kBatch = 12;
std::mutex random_mutex;  // the rank threads share the default generator

std::shared_ptr<nn::Sequential> make_model(bool freeze_first_bias = false) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(7);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 16), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(16, 16), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(16, 3)});
  m->to(kFloat64);
  if (freeze_first_bias) m->parameter_slots()[1]->requires_grad_(false);
  return m;
}

std::pair<Tensor, Tensor> batch(int step) {
  std::lock_guard<std::mutex> lock(random_mutex);
  manual_seed(1000 + step);
  return {randn({kBatch, 4}, kFloat64), randn({kBatch, 3}, kFloat64)};
}

std::vector<Tensor> trainable(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (const Tensor& p : params)
    if (p.requires_grad()) out.push_back(p);
  return out;
}

// One process, the whole batch; with `accumulate`, two half-batches' losses summed per step.
nn::NamedTensors train_single(int steps, bool accumulate = false, bool freeze = false,
                              double clip = 0) {
  auto model = make_model(freeze);
  optim::SGD opt(trainable(model->parameters()), optim::SGDOptions(0.1).with_momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    auto [x, y] = batch(s);
    opt.zero_grad();
    if (accumulate) {
      Tensor a = nn::functional::mse_loss(model->forward(x.narrow(0, 0, kBatch / 2)),
                                          y.narrow(0, 0, kBatch / 2));
      Tensor b = nn::functional::mse_loss(model->forward(x.narrow(0, kBatch / 2, kBatch / 2)),
                                          y.narrow(0, kBatch / 2, kBatch / 2));
      (a + b).backward();
    } else {
      nn::functional::mse_loss(model->forward(x), y).backward();
    }
    if (clip > 0) nn::utils::clip_grad_norm_(model->parameters(), clip);
    opt.step();
  }
  return model->state_dict();
}

// The model with its middle Linear a unit of its own, then the whole wrapped.
std::shared_ptr<FSDP> wrap(std::shared_ptr<nn::Sequential> model, FsdpOptions options) {
  model->replace_module("2", std::make_shared<FSDP>(model->named_child("2"), options));
  return std::make_shared<FSDP>(model, options);
}

void expect_state_equal(const nn::NamedTensors& got, const nn::NamedTensors& expected,
                        double rtol) {
  ASSERT_EQ(got.size(), expected.size());
  std::map<std::string, Tensor> by_name(got.begin(), got.end());
  for (const auto& [name, t] : expected) {
    ASSERT_TRUE(by_name.count(name)) << name;
    std::vector<double> x = values(by_name[name]), y = values(t);
    ASSERT_EQ(x.size(), y.size()) << name;
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_NEAR(x[k], y[k], rtol * (1 + std::abs(y[k]))) << name << " at " << k;
  }
}

// Each rank's slice of the step's batch, `micro` of `parts` (gradient accumulation).
std::pair<Tensor, Tensor> slice(int step, int rank, int world, int micro = 0, int parts = 1) {
  auto [x, y] = batch(step);
  int64_t per = kBatch / parts / world, start = micro * (kBatch / parts) + rank * per;
  return {x.narrow(0, start, per), y.narrow(0, start, per)};
}

TEST(FSDP, NRanksEqualOneProcessUnderEveryStrategy) {
  const int steps = 4;
  nn::NamedTensors reference = train_single(steps);
  for (int world : {2, 3}) {
    for (ShardingStrategy strategy : {ShardingStrategy::FULL_SHARD, ShardingStrategy::SHARD_GRAD_OP,
                                      ShardingStrategy::NO_SHARD})
    for (bool per_parameter : {false, true}) {
      run_threads(world, [&](int rank) {
        FsdpOptions options;
        options.sharding_strategy = strategy;
        options.per_parameter = per_parameter;
        auto fsdp = wrap(make_model(), options);
        std::vector<Tensor> params = fsdp->parameters();
        int64_t shards = strategy == ShardingStrategy::NO_SHARD ? 1 : world;
        auto part = [&](int64_t n) { return (n + shards - 1) / shards; };
        // torch.chunk's rows for this rank: blocks of part(n), the last ones shorter or empty.
        int64_t r = strategy == ShardingStrategy::NO_SHARD ? 0 : rank;
        auto rows = [&](int64_t n) { return std::clamp<int64_t>(n - r * part(n), 0, part(n)); };
        if (per_parameter) {
          // Each parameter keeps its name and rank, with its block of rows.
          ASSERT_EQ(params.size(), 6u);
          EXPECT_EQ(fsdp->named_parameters()[0].first, "_fsdp_wrapped_module.0.weight");
          EXPECT_EQ(params[0].sizes(), (Shape{rows(16), 4}));
          EXPECT_EQ(params[5].sizes(), (Shape{rows(3)}));
        } else {
          // Two units, each holding its flat shard; NO_SHARD keeps everything.
          ASSERT_EQ(params.size(), 2u);
          EXPECT_EQ(params[0].numel() + params[1].numel(), part(80 + 51) + part(272))
              << sharding_strategy_name(strategy);
        }
        optim::SGD opt(params, optim::SGDOptions(0.1).with_momentum(0.9));
        for (int s = 0; s < steps; ++s) {
          auto [x, y] = slice(s, rank, world);
          opt.zero_grad();
          nn::functional::mse_loss(fsdp->forward(x), y).backward();
          opt.step();
        }
        expect_state_equal(fsdp->full_state_dict(), reference, 1e-10);
      });
    }
  }
}

// Note [Forward prefetch]: from the second step on, the root's forward starts gathering the
// inner unit, whose forward lands it; the training is the same as without.
TEST(FSDP, ForwardPrefetchGathersTheNextUnitAheadAndChangesNothing) {
  const int steps = 4;
  nn::NamedTensors reference = train_single(steps);
  for (ShardingStrategy strategy : {ShardingStrategy::FULL_SHARD, ShardingStrategy::SHARD_GRAD_OP})
    for (bool per_parameter : {false, true})
      run_threads(2, [&](int rank) {
        FsdpOptions options;
        options.sharding_strategy = strategy;
        options.per_parameter = per_parameter;
        options.forward_prefetch = true;
        auto fsdp = wrap(make_model(), options);
        optim::SGD opt(fsdp->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
        for (int s = 0; s < steps; ++s) {
          auto [x, y] = slice(s, rank, 2);
          opt.zero_grad();
          nn::functional::mse_loss(fsdp->forward(x), y).backward();
          opt.step();
        }
        std::vector<FSDP*> units = fsdp->units();
        ASSERT_EQ(units.size(), 2u);
        EXPECT_EQ(units[1]->handle().prefetched_forwards(), steps - 1);
        EXPECT_EQ(units[0]->handle().prefetched_forwards(), 0);  // its next is itself running
        expect_state_equal(fsdp->full_state_dict(), reference, 1e-10);
      });
}

// A gather started ahead and then outdated (the shards stepped before the unit's forward ran,
// as when the forward order changes) is not used: the unit gathers again.
TEST(FSDP, AnOutdatedPrefetchIsGatheredAgain) {
  run_threads(2, [&](int rank) {
    FsdpOptions options;
    options.forward_prefetch = true;
    auto fsdp = wrap(make_model(), options);
    FSDP* inner = fsdp->units()[1];
    auto [x, y] = slice(0, rank, 2);
    fsdp->forward(x);  // learns the order
    fsdp->handle().pre_forward();  // the root starts: the inner unit's gather starts ahead
    fsdp->handle().post_forward({});
    {
      NoGradGuard no_grad;
      for (Tensor& p : inner->parameters()) p.add_(1.0);  // a step before the inner forward
    }
    Tensor first = fsdp->forward(x);
    EXPECT_EQ(inner->handle().prefetched_forwards(), 0);  // the outdated gather was not used
    Tensor again = fsdp->forward(x);                      // this one's is up to date
    EXPECT_EQ(inner->handle().prefetched_forwards(), 1);
    EXPECT_EQ(values(first), values(again));
  });
}

// FSDP2's fully_shard in C++: no wrapper, two hooks on each module (Note [Module calls]). The
// middle Linear is a unit of its own; Sequential calls it through operator(), so its hooks run.
TEST(FSDP, FullyShardHooksTheModulesInPlace) {
  const int steps = 4;
  nn::NamedTensors reference = train_single(steps);
  for (ShardingStrategy strategy : {ShardingStrategy::FULL_SHARD, ShardingStrategy::SHARD_GRAD_OP})
    run_threads(2, [&](int rank) {
      auto model = make_model();
      FsdpOptions options;
      options.sharding_strategy = strategy;
      FlatParamHandle& inner = fully_shard(*model->named_child("2"), options);
      FlatParamHandle& root = fully_shard(*model, options);
      EXPECT_THROW(fully_shard(*model, options), Error);
      std::vector<Tensor> params = model->parameters();
      ASSERT_EQ(params.size(), 6u);
      EXPECT_EQ(params[2].sizes(), (Shape{8, 16}));  // this rank's 8 of the 16 rows
      EXPECT_EQ(model->named_parameters()[2].first, "2.weight");
      optim::SGD opt(params, optim::SGDOptions(0.1).with_momentum(0.9));
      for (int s = 0; s < steps; ++s) {
        auto [x, y] = slice(s, rank, 2);
        opt.zero_grad();
        nn::functional::mse_loss((*model)(x), y).backward();
        opt.step();
      }
      inner.summon_full();
      root.summon_full();
      nn::NamedTensors full = model->state_dict();
      expect_state_equal(full, reference, 1e-10);
      root.release_full(false);
      inner.release_full(false);
      EXPECT_EQ(model->parameters()[2].sizes(), (Shape{8, 16}));
    });
}

TEST(FSDP, FullyShardClipsAcrossShardsAsOneProcess) {
  nn::NamedTensors reference = train_single(3, false, false, /*clip=*/0.05);
  run_threads(2, [&](int rank) {
    auto model = make_model();
    FlatParamHandle& inner = fully_shard(*model->named_child("2"));
    FlatParamHandle& root = fully_shard(*model);
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < 3; ++s) {
      auto [x, y] = slice(s, rank, 2);
      opt.zero_grad();
      nn::functional::mse_loss((*model)(x), y).backward();
      EXPECT_GT(clip_grad_norm_(*model, 0.05), 0.05);  // the whole norm, above the bound
      opt.step();
    }
    inner.summon_full();
    root.summon_full();
    expect_state_equal(model->state_dict(), reference, 1e-10);
    root.release_full(false);
    inner.release_full(false);
    auto plain = make_model();
    EXPECT_THROW(clip_grad_norm_(*plain, 1.0), Error);
  });
}

TEST(FSDP, NoSyncAccumulatesUntilTheNextSynchronisedBackward) {
  nn::NamedTensors reference = train_single(3, /*accumulate=*/true);
  run_threads(2, [&](int rank) {
    auto fsdp = wrap(make_model(), {});
    optim::SGD opt(fsdp->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < 3; ++s) {
      opt.zero_grad();
      {
        auto guard = fsdp->no_sync();
        auto [x, y] = slice(s, rank, 2, 0, 2);
        nn::functional::mse_loss(fsdp->forward(x), y).backward();
        for (const Tensor& p : fsdp->parameters()) EXPECT_FALSE(p.grad().defined());
      }
      auto [x, y] = slice(s, rank, 2, 1, 2);
      nn::functional::mse_loss(fsdp->forward(x), y).backward();
      opt.step();
    }
    expect_state_equal(fsdp->full_state_dict(), reference, 1e-10);
  });
}

TEST(FSDP, FrozenParametersSitBesideTrainableOnesInOneUnit) {
  nn::NamedTensors reference = train_single(3, false, /*freeze=*/true);
  run_threads(2, [&](int rank) {
    auto fsdp = std::make_shared<FSDP>(make_model(/*freeze_first_bias=*/true));
    std::vector<Tensor> params = fsdp->parameters();
    ASSERT_EQ(params.size(), 2u);  // trainable and frozen flat parameters of one unit
    EXPECT_TRUE(params[0].requires_grad());
    EXPECT_FALSE(params[1].requires_grad());
    EXPECT_EQ(params[1].numel(), 8);  // the 16 frozen biases, halved
    optim::SGD opt(trainable(params), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < 3; ++s) {
      auto [x, y] = slice(s, rank, 2);
      opt.zero_grad();
      nn::functional::mse_loss(fsdp->forward(x), y).backward();
      opt.step();
    }
    EXPECT_FALSE(params[1].grad().defined());
    expect_state_equal(fsdp->full_state_dict(), reference, 1e-10);
  });
}

TEST(FSDP, MixedPrecisionComputesInParamDtype) {
  nn::NamedTensors reference = train_single(3);
  run_threads(2, [&](int rank) {
    FsdpOptions options;
    options.mixed_precision.param_dtype = kFloat32;
    options.mixed_precision.reduce_dtype = kFloat32;
    auto fsdp = wrap(make_model(), options);
    for (const Tensor& p : fsdp->parameters()) EXPECT_EQ(p.dtype(), kFloat64);  // the shards
    optim::SGD opt(fsdp->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < 3; ++s) {
      auto [x, y] = slice(s, rank, 2);
      opt.zero_grad();
      Tensor out = fsdp->forward(x.to(kFloat32));
      EXPECT_EQ(out.dtype(), kFloat32);
      nn::functional::mse_loss(out, y.to(kFloat32)).backward();
      opt.step();
    }
    expect_state_equal(fsdp->full_state_dict(), reference, 1e-5);
  });
}

TEST(FSDP, GradientsClipAcrossShardsAsInOneProcess) {
  nn::NamedTensors reference = train_single(3, false, false, /*clip=*/0.05);
  run_threads(3, [&](int rank) {
    auto fsdp = wrap(make_model(), {});
    optim::SGD opt(fsdp->parameters(), optim::SGDOptions(0.1).with_momentum(0.9));
    for (int s = 0; s < 3; ++s) {
      auto [x, y] = slice(s, rank, 3);
      opt.zero_grad();
      nn::functional::mse_loss(fsdp->forward(x), y).backward();
      EXPECT_GT(fsdp->clip_grad_norm_(0.05), 0.05);
      opt.step();
    }
    expect_state_equal(fsdp->full_state_dict(), reference, 1e-10);
  });
}

TEST(FSDP, FullStateDictsLoadIntoShardsAndMismatchesAreNamed) {
  run_threads(2, [&](int rank) {
    auto fsdp = wrap(make_model(), {});
    nn::NamedTensors state = fsdp->full_state_dict();
    std::vector<std::string> names;
    for (auto& [name, t] : state) names.push_back(name);
    EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias",
                                               "4.weight", "4.bias"}));
    for (auto& [name, t] : state) t = full(t.sizes(), 0.5, kFloat64);
    fsdp->load_full_state_dict(state);
    for (auto& [name, t] : fsdp->full_state_dict())
      EXPECT_EQ(values(t), std::vector<double>(t.numel(), 0.5)) << name;
    auto plain = make_model();
    plain->load_state_dict(state);
    Tensor x = ones({2, 4}, kFloat64);
    EXPECT_EQ(values(fsdp->forward(x)), values(plain->forward(x))) << rank;
    state.pop_back();
    EXPECT_THROW_WITH(fsdp->load_full_state_dict(state), "missing keys [4.bias]");
  });
}

// The gathered parameters (a 256 x 256 float64 Linear: 514 KiB) live from the unit's forward to
// the end of its backward under SHARD_GRAD_OP; FULL_SHARD frees them after forward and gathers
// them again for backward; both free them once the gradients are reduced.
TEST(FSDP, FullShardFreesTheGatheredParametersBetweenForwardAndBackward) {
  const size_t kGathered = 256 * 257 * 8;
  for (ShardingStrategy strategy : {ShardingStrategy::FULL_SHARD, ShardingStrategy::SHARD_GRAD_OP}) {
    run_threads(1, [&](int) {
      CachingAllocator& memory = device_backend(kCPU).allocator(0);
      auto linear = std::make_shared<nn::Linear>(256, 256);
      linear->to(kFloat64);
      FsdpOptions options;
      options.sharding_strategy = strategy;
      FSDP fsdp(linear, options);
      Tensor x = ones({1, 256}, kFloat64);
      size_t before = memory.memory_allocated();
      Tensor loss = fsdp.forward(x).sum();
      size_t after_forward = memory.memory_allocated();
      if (strategy == ShardingStrategy::FULL_SHARD)
        EXPECT_LT(after_forward, before + kGathered / 4);
      else
        EXPECT_GE(after_forward, before + kGathered);
      loss.backward();
      loss = Tensor();
      EXPECT_LT(memory.memory_allocated(), before + kGathered / 4 + kGathered)  // the grad
          << sharding_strategy_name(strategy);
      EXPECT_EQ(values(fsdp.parameters()[0].grad()).size(), 256u * 257);
    });
  }
}

}  // namespace
}  // namespace ember::distributed
