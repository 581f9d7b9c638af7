// Optimizer steps against the update rules written out by hand (the formulas of torch.optim).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/util/test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

// Runs `steps` updates of optimizer on a parameter whose gradient is always `grad`.
template <typename Make>
Tensor run(Make make, const Tensor& init, const Tensor& grad, int steps) {
  Tensor p = init.clone().requires_grad_();
  auto opt = make(std::vector<Tensor>{p});
  for (int i = 0; i < steps; ++i) {
    opt->zero_grad();
    (p * grad).sum().backward();
    opt->step();
  }
  return p.detach();
}

TEST(SGD, PlainMomentumNesterovWeightDecay) {
  Tensor p0 = tensor({1.0, -2.0}), g = tensor({0.5, 1.0});
  auto plain = run([](auto ps) { return std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.1)); },
                   p0, g, 3);
  EXPECT_TRUE(all_close(plain, p0 - g * 0.3, 1e-6, 1e-7));
  // momentum: buf1 = g, buf2 = 1.9 g, buf3 = 2.71 g; total step = 5.61 g
  auto mom = run(
      [](auto ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.1).with_momentum(0.9));
      },
      p0, g, 3);
  EXPECT_TRUE(all_close(mom, p0 - g * 0.561, 1e-6, 1e-7));
  // nesterov: d = g + 0.9 buf -> 1.9 g, 2.71 g, 3.439 g
  auto nes = run(
      [](auto ps) {
        return std::make_unique<optim::SGD>(
            ps, optim::SGDOptions(0.1).with_momentum(0.9).with_nesterov());
      },
      p0, g, 3);
  EXPECT_TRUE(all_close(nes, p0 - g * (0.1 * (1.9 + 2.71 + 3.439)), 1e-6, 1e-7));
  // weight decay: p <- p - lr (g + wd p)
  auto wd = run(
      [](auto ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.1).with_weight_decay(0.5));
      },
      p0, g, 1);
  EXPECT_TRUE(all_close(wd, p0 - (g + p0 * 0.5) * 0.1, 1e-6, 1e-7));
  EXPECT_THROW_WITH(optim::SGD({ones({1}).requires_grad_()}, optim::SGDOptions(-1)),
                    "invalid learning rate");
  EXPECT_THROW_WITH(optim::SGD({(ones({1}).requires_grad_() * 2)}, optim::SGDOptions(0.1)),
                    "non-leaf");
}

// Adam by hand, for a constant gradient.
Tensor adam_reference(const Tensor& p0, const Tensor& g, int steps, double lr, double b1, double b2,
                      double eps, double wd, bool decoupled) {
  Tensor p = p0.clone(), m = zeros_like(p0), v = zeros_like(p0);
  for (int t = 1; t <= steps; ++t) {
    Tensor grad = g;
    if (wd != 0 && !decoupled) grad = g + p * wd;
    if (wd != 0 && decoupled) p = p * (1 - lr * wd);
    m = m * b1 + grad * (1 - b1);
    v = v * b2 + grad * grad * (1 - b2);
    Tensor mhat = m / (1 - std::pow(b1, t)), vhat = v / (1 - std::pow(b2, t));
    p = p - mhat * lr / (vhat.sqrt() + eps);
  }
  return p;
}

TEST(Adam, MatchesTheUpdateRule) {
  Tensor p0 = tensor({1.0, -2.0, 0.5}, kFloat64), g = tensor({0.5, -1.0, 2.0}, kFloat64);
  auto adam =
      run([](auto ps) { return std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.01)); }, p0,
          g, 5);
  EXPECT_TRUE(
      all_close(adam, adam_reference(p0, g, 5, 0.01, 0.9, 0.999, 1e-8, 0, false), 1e-10, 1e-12));
  auto wd = run(
      [](auto ps) {
        return std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.01).with_weight_decay(0.1));
      },
      p0, g, 4);
  // With weight decay the gradient changes every step, which the reference recomputes from p.
  Tensor p = p0.clone(), m = zeros_like(p0), v = zeros_like(p0);
  for (int t = 1; t <= 4; ++t) {
    Tensor grad = g + p * 0.1;
    m = m * 0.9 + grad * 0.1;
    v = v * 0.999 + grad * grad * 0.001;
    p = p - (m / (1 - std::pow(0.9, t))) * 0.01 / ((v / (1 - std::pow(0.999, t))).sqrt() + 1e-8);
  }
  EXPECT_TRUE(all_close(wd, p, 1e-10, 1e-12));
  auto adamw = run([](auto ps) { return std::make_unique<optim::AdamW>(ps); }, p0, g, 3);
  EXPECT_TRUE(
      all_close(adamw, adam_reference(p0, g, 3, 1e-3, 0.9, 0.999, 1e-8, 0.01, true), 1e-10, 1e-12));
}

TEST(Optimizer, StateDictRoundTrip) {
  Tensor p = tensor({1.0, 2.0}).requires_grad_();
  optim::Adam a({p}, optim::AdamOptions(0.1));
  (p * p).sum().backward();
  a.step();
  nn::NamedTensors state = a.state_dict();
  Tensor q = p.detach().clone().requires_grad_();
  optim::Adam b({q}, optim::AdamOptions(0.5));
  b.load_state_dict(state);
  EXPECT_EQ(b.lr(), 0.1);
  // Both continue identically.
  for (auto [opt, t] : {std::pair<optim::Adam*, Tensor*>{&a, &p}, {&b, &q}}) {
    opt->zero_grad();
    ((*t) * (*t)).sum().backward();
    opt->step();
  }
  EXPECT_TRUE(all_close(p, q, 0, 0));
  nn::NamedTensors bad = state;
  bad[0].second = zeros({5});
  EXPECT_THROW_WITH(b.load_state_dict(bad), "has shape [5] but parameter 0 has shape [2]");
  bad = state;
  bad[0].first = "state.x.exp_avg";
  EXPECT_THROW_WITH(b.load_state_dict(bad), "malformed key 'state.x.exp_avg'");
  bad = state;
  bad.emplace_back("param_groups.0.lr", ones({2}));
  EXPECT_THROW_WITH(b.load_state_dict(bad), "param_groups.0.lr must hold one number");
  // Found by fuzzing the checkpoint loader: an unknown option was kept, and survived a rollback.
  bad = state;
  bad.emplace_back("param_groups.0.be", scalar_tensor(0.5, kFloat64));
  EXPECT_THROW_WITH(b.load_state_dict(bad), "unknown option 'be' in param_groups.0.be");
  for (auto& [name, t] : b.state_dict()) EXPECT_NE(name, "param_groups.0.be");
  // Loading replaces the state: a fresh optimizer's dict leaves no moments behind, as in PyTorch.
  optim::Adam fresh({q}, optim::AdamOptions(0.1));
  b.load_state_dict(fresh.state_dict());
  Tensor before = q.detach().clone();
  b.zero_grad();
  (q * q).sum().backward();
  b.step();  // Adam's first step moves every element by lr
  EXPECT_TRUE(all_close(before - q.detach(), full({2}, 0.1), 1e-5, 1e-7));
}

TEST(Schedulers, StepAndCosine) {
  Tensor p = ones({1}).requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  optim::StepLR step(opt, 2, 0.5);
  std::vector<double> lrs;
  for (int e = 0; e < 5; ++e) {
    lrs.push_back(opt.lr());
    step.step();
  }
  EXPECT_EQ(lrs, (std::vector<double>{1, 1, 0.5, 0.5, 0.25}));
  optim::SGD opt2({p}, optim::SGDOptions(1.0));
  optim::CosineAnnealingLR cos(opt2, 4, 0.0);
  cos.step();
  EXPECT_NEAR(opt2.lr(), (1 + std::cos(M_PI / 4)) / 2, 1e-12);
  cos.step();
  cos.step();
  cos.step();
  EXPECT_NEAR(opt2.lr(), 0.0, 1e-12);
}

TEST(Schedulers, ResumeFromTheOptimizersStateOrTheirOwn) {
  Tensor p = ones({1}).requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  optim::StepLR step(opt, 2, 0.5);
  for (int e = 0; e < 3; ++e) step.step();
  EXPECT_EQ(opt.lr(), 0.5);
  // A new run: the optimizer's state carries initial_lr, the scheduler resumes after 3 epochs.
  optim::SGD opt2({p}, optim::SGDOptions(1.0));
  opt2.load_state_dict(opt.state_dict());
  optim::StepLR resumed(opt2, 2, 0.5, /*last_epoch=*/3);
  EXPECT_EQ(opt2.lr(), 0.5);
  step.step();
  resumed.step();
  EXPECT_EQ(opt2.lr(), opt.lr());
  EXPECT_EQ(opt2.lr(), 0.25);
  // Or through the scheduler's own state dict.
  optim::SGD opt3({p}, optim::SGDOptions(7.0));
  optim::StepLR loaded(opt3, 2, 0.5);
  loaded.load_state_dict(step.state_dict());
  EXPECT_EQ(loaded.last_epoch(), 4);
  EXPECT_EQ(opt3.lr(), 0.25);
  optim::SGD bare({p}, optim::SGDOptions(1.0));
  EXPECT_THROW_WITH(optim::StepLR(bare, 2, 0.5, 3), "has no initial_lr to resume from");
  EXPECT_THROW_WITH(loaded.load_state_dict({}), "missing or negative last_epoch");
}

TEST(Training, LinearRegressionConverges) {
  manual_seed(1);
  Tensor X = randn({256, 3});
  Tensor w = tensor({2.0, -1.0, 0.5}).view({3, 1});
  Tensor y = X.matmul(w) + 0.3;
  nn::Linear model(3, 1);
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.1).with_momentum(0.5));
  for (int i = 0; i < 200; ++i) {
    opt.zero_grad();
    nn::functional::mse_loss(model.forward(X), y).backward();
    opt.step();
  }
  EXPECT_TRUE(all_close(model.weight.detach(), w.t(), 1e-3, 1e-3));
  EXPECT_NEAR(model.bias.item<double>(), 0.3, 1e-3);
}

}  // namespace
}  // namespace ember
