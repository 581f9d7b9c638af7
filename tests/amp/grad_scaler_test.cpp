// amp::GradScaler: scaling, unscaling, skipped steps, backoff and growth, its errors, every
// optimizer, gradient accumulation, state_dict, and the same skip/backoff sequence as PyTorch
// 1.13's GradScaler on the same injected infs (torch_grad_scaler_oracle.py). DDP with the scaler
// is in tests/distributed/ddp_amp_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
using amp::GradScaler;
using amp::GradScalerOptions;

TEST(GradScaler, ScaleMultipliesByAFloat32ScaleOfShapeOne) {
  GradScaler scaler;
  Tensor loss = full({}, 3.0, kBFloat16);
  Tensor scaled = scaler.scale(loss);
  EXPECT_EQ(scaled.dtype(), kFloat32);  // a [1] float32 tensor promotes a 16-bit loss
  EXPECT_EQ(scaled.sizes(), Shape({1}));
  EXPECT_EQ(scaled.item<double>(), 3.0 * 65536);
  EXPECT_EQ(scaler.get_scale(), 65536);
  GradScaler off(GradScalerOptions().with_enabled(false));
  EXPECT_TRUE(off.scale(loss).is_same(loss));
  EXPECT_EQ(off.get_scale(), 1);
}

// A two-parameter model whose loss makes gradients that scaling by powers of two keeps exact.
struct Toy {
  Tensor w = tensor({{0.5, -1.0}, {2.0, 0.25}}).requires_grad_();
  Tensor b = tensor({0.125, -0.5}).requires_grad_();
  Tensor loss(int64_t i) const {
    Tensor x = tensor({{1.0, 2.0}, {-3.0, 0.5}}) * static_cast<double>(i + 1);
    return (nn::functional::linear(x, w, b).tanh() * x).sum();
  }
};

TEST(GradScaler, UnscaleDividesTheGradientsAndStepTakesThem) {
  Toy scaled, plain;
  optim::SGD opt(std::vector<Tensor>{scaled.w, scaled.b}, optim::SGDOptions(0.1));
  optim::SGD ref(std::vector<Tensor>{plain.w, plain.b}, optim::SGDOptions(0.1));
  GradScaler scaler(GradScalerOptions().with_init_scale(1024));
  scaler.scale(scaled.loss(0)).backward();
  plain.loss(0).backward();
  scaler.unscale_(opt);
  EXPECT_TRUE(all_close(scaled.w.grad(), plain.w.grad(), 0, 0));
  EXPECT_TRUE(scaler.step(opt));
  ref.step();
  EXPECT_TRUE(all_close(scaled.w, plain.w, 0, 0));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1024);  // one clean step of 2000
}

TEST(GradScaler, AnInfOrNaNSkipsTheStepAndBacksOffThenCleanStepsGrow) {
  Toy m;
  optim::SGD opt(std::vector<Tensor>{m.w, m.b}, optim::SGDOptions(0.1));
  GradScaler scaler(GradScalerOptions().with_init_scale(256).with_growth_interval(2));
  std::vector<double> scales;
  for (int i = 0; i < 5; ++i) {
    opt.zero_grad();
    scaler.scale(m.loss(i)).backward();
    if (i == 1) m.b.mutable_grad().fill_(std::numeric_limits<double>::quiet_NaN());
    Tensor before = m.w.detach().clone();
    bool stepped = scaler.step(opt);
    EXPECT_EQ(stepped, i != 1) << i;
    EXPECT_EQ(equal(before, m.w), i == 1) << "a skipped step leaves every parameter, step " << i;
    scaler.update();
    scales.push_back(scaler.get_scale());
  }
  EXPECT_EQ(scales, (std::vector<double>{256, 128, 128, 256, 256}));
}

TEST(GradScaler, MisuseIsAClearError) {
  Toy m;
  optim::SGD opt(std::vector<Tensor>{m.w, m.b}, optim::SGDOptions(0.1));
  GradScaler scaler;
  EXPECT_THROW_WITH(scaler.step(opt), "call scaler.scale(loss) earlier");
  scaler.scale(m.loss(0)).backward();
  scaler.unscale_(opt);
  EXPECT_THROW_WITH(scaler.unscale_(opt), "unscale_() has already been called");
  scaler.step(opt);
  EXPECT_THROW_WITH(scaler.unscale_(opt), "unscale_() is being called after step()");
  EXPECT_THROW_WITH(scaler.step(opt), "step() has already been called since the last update()");
  scaler.update();
  EXPECT_THROW_WITH(scaler.update(), "no inf checks were recorded prior to update()");
  opt.zero_grad();
  EXPECT_THROW_WITH(scaler.step(opt), "no inf checks were recorded for this optimizer");
  Tensor h = tensor({1.0}, kFloat16).requires_grad_();
  optim::SGD half(std::vector<Tensor>{h}, optim::SGDOptions(0.1));
  scaler.scale(h.sum()).backward();
  EXPECT_THROW_WITH(scaler.unscale_(half), "attempting to unscale float16 gradients");
  EXPECT_THROW_WITH(GradScaler(GradScalerOptions().with_growth_factor(0.5)),
                    "growth factor must be > 1.0");
}

// Training with the scaler (scale a power of two, no overflow) equals training without it, bit
// for bit: scaling by 2^k is exact in every gradient op, and so is the division back.
template <typename MakeOpt>
void expect_scaled_training_equals_plain(MakeOpt make_opt) {
  Toy scaled, plain;
  auto opt = make_opt(std::vector<Tensor>{scaled.w, scaled.b});
  auto ref = make_opt(std::vector<Tensor>{plain.w, plain.b});
  GradScaler scaler(GradScalerOptions().with_init_scale(4096).with_growth_interval(2));
  for (int i = 0; i < 6; ++i) {
    opt.zero_grad();
    ref.zero_grad();
    scaler.scale(scaled.loss(i)).backward();
    plain.loss(i).backward();
    ASSERT_TRUE(scaler.step(opt));
    ref.step();
    scaler.update();
  }
  EXPECT_EQ(scaler.get_scale(), 4096 * 8);  // grew every second step
  EXPECT_TRUE(all_close(scaled.w, plain.w, 0, 0));
  EXPECT_TRUE(all_close(scaled.b, plain.b, 0, 0));
}

TEST(GradScaler, WorksWithEveryOptimizer) {
  expect_scaled_training_equals_plain([](std::vector<Tensor> p) {
    return optim::SGD(p, optim::SGDOptions(0.1).with_momentum(0.9).with_weight_decay(1e-2));
  });
  expect_scaled_training_equals_plain([](std::vector<Tensor> p) {
    return optim::SGD(p, optim::SGDOptions(0.1).with_momentum(0.9).with_nesterov());
  });
  expect_scaled_training_equals_plain(
      [](std::vector<Tensor> p) { return optim::Adam(p, optim::AdamOptions(1e-2)); });
  expect_scaled_training_equals_plain([](std::vector<Tensor> p) {
    return optim::Adam(p, optim::AdamOptions(1e-2).with_amsgrad().with_weight_decay(1e-2));
  });
  expect_scaled_training_equals_plain([](std::vector<Tensor> p) {
    return optim::AdamW(p, optim::AdamOptions(1e-2).with_weight_decay(0.1));
  });
}

TEST(GradScaler, GradientAccumulationStepsOnceOnTheSummedGradients) {
  Toy scaled, plain;
  optim::Adam opt(std::vector<Tensor>{scaled.w, scaled.b}, optim::AdamOptions(1e-2));
  optim::Adam ref(std::vector<Tensor>{plain.w, plain.b}, optim::AdamOptions(1e-2));
  GradScaler scaler(GradScalerOptions().with_init_scale(1 << 20));
  for (int micro = 0; micro < 3; ++micro) {
    scaler.scale(scaled.loss(micro) / 3).backward();
    (plain.loss(micro) / 3).backward();
  }
  // An inf in the last micro-batch poisons the whole accumulated step.
  Toy poisoned;
  optim::Adam popt(std::vector<Tensor>{poisoned.w, poisoned.b}, optim::AdamOptions(1e-2));
  GradScaler pscaler;
  pscaler.scale(poisoned.loss(0)).backward();
  pscaler.scale(poisoned.loss(1) * std::numeric_limits<double>::infinity()).backward();
  EXPECT_FALSE(pscaler.step(popt));
  EXPECT_TRUE(scaler.step(opt));
  ref.step();
  EXPECT_TRUE(all_close(scaled.w, plain.w, 0, 0));
  EXPECT_TRUE(all_close(scaled.b, plain.b, 0, 0));
}

TEST(GradScaler, StateDictRoundTripsAndAnEmptyOneIsRejected) {
  Toy m;
  optim::SGD opt(std::vector<Tensor>{m.w, m.b}, optim::SGDOptions(0.1));
  GradScaler scaler(GradScalerOptions().with_init_scale(64).with_growth_interval(5));
  for (int i = 0; i < 3; ++i) {
    scaler.scale(m.loss(i)).backward();
    scaler.step(opt);
    scaler.update();
  }
  GradScaler restored;
  restored.load_state_dict(scaler.state_dict());
  EXPECT_EQ(restored.get_scale(), 64);
  EXPECT_EQ(restored.get_growth_interval(), 5);
  nn::NamedTensors sd = restored.state_dict();
  EXPECT_EQ(sd[4].first, "_growth_tracker");
  EXPECT_EQ(sd[4].second.item<double>(), 3);
  EXPECT_TRUE(GradScaler(GradScalerOptions().with_enabled(false)).state_dict().empty());
  EXPECT_THROW_WITH(restored.load_state_dict({}), "the source state dict is empty");
}

// The scenarios of torch_grad_scaler_oracle.py, replayed in ember.
struct Scenario {
  double init_scale;
  int64_t interval;
  double factor;
  std::map<int, double> inject;
  std::set<int> unscale_first;
};

std::vector<nlohmann::json> run_ember(const Scenario& s) {
  Tensor w = tensor({{0.5, -1.0}, {2.0, 0.25}}).requires_grad_();
  Tensor x = tensor({{1.0, 2.0}, {-3.0, 0.5}});
  optim::SGD opt(std::vector<Tensor>{w}, optim::SGDOptions(0.125));
  GradScaler scaler(
      GradScalerOptions().with_init_scale(s.init_scale).with_growth_interval(s.interval));
  std::vector<nlohmann::json> out;
  for (int step = 0; step < 12; ++step) {
    opt.zero_grad();
    scaler.scale(pow((w * x).sum() * (step + 1), 2) * (s.factor / 64)).backward();
    if (s.inject.count(step)) {
      NoGradGuard no_grad;
      w.mutable_grad().select(0, 1).select(0, 0).fill_(s.inject.at(step));
    }
    if (s.unscale_first.count(step)) scaler.unscale_(opt);
    Tensor before = w.detach().clone();
    scaler.step(opt);
    scaler.update();
    out.push_back({{"step", step},
                   {"stepped", !equal(before, w)},
                   {"scale", scaler.get_scale()},
                   {"tracker", scaler.state_dict()[4].second.item<int64_t>()},
                   {"w", values(w)}});
  }
  return out;
}

std::vector<nlohmann::json> run_torch(const std::string& py, const std::string& name) {
  std::string cmd = py + " -O " EMBER_SOURCE_DIR "/tests/amp/torch_grad_scaler_oracle.py " + name;
  FILE* f = popen(cmd.c_str(), "r");
  EXPECT_NE(f, nullptr) << cmd;
  std::vector<nlohmann::json> out;
  char line[4096];
  while (f && fgets(line, sizeof line, f)) out.push_back(nlohmann::json::parse(line));
  if (f) EXPECT_EQ(pclose(f), 0) << cmd;
  return out;
}

TEST(GradScaler, SkipAndBackoffSequenceEqualsPyTorchs) {
  std::string py = torch_python();
  if (py.empty()) GTEST_SKIP() << "needs /usr/bin/python3 with torch (python3-torch)";
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, Scenario> scenarios = {
      {"backoff_and_growth", {1024, 3, 1.0, {{1, inf}, {2, nan}, {6, -inf}, {7, inf}}, {4, 9}}},
      {"growth_overflow", {std::ldexp(1.0, 126), 2, std::ldexp(1.0, -10), {{5, nan}}, {}}},
  };
  for (const auto& [name, s] : scenarios) {
    std::vector<nlohmann::json> torch = run_torch(py, name), mine = run_ember(s);
    ASSERT_EQ(torch.size(), 12u) << name;
    int skipped = 0;
    for (size_t i = 0; i < torch.size(); ++i) {
      EXPECT_EQ(mine[i]["stepped"], torch[i]["stepped"]) << name << " step " << i;
      EXPECT_EQ(mine[i]["scale"].get<double>(), torch[i]["scale"].get<double>())
          << name << " step " << i;
      EXPECT_EQ(mine[i]["tracker"], torch[i]["tracker"]) << name << " step " << i;
      std::vector<double> a = mine[i]["w"], b = torch[i]["w"];
      for (size_t k = 0; k < a.size(); ++k)
        EXPECT_NEAR(a[k], b[k], 1e-6 * std::max(1.0, std::abs(b[k]))) << name << " step " << i;
      skipped += !torch[i]["stepped"].get<bool>();
    }
    EXPECT_GT(skipped, 0) << name << ": the scenario must skip steps to test anything";
  }
}

}  // namespace
}  // namespace ember
