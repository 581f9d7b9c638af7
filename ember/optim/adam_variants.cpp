#include "ember/optim/adam_variants.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/core/profiler_events.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduce.h"

namespace ember::optim {

std::map<std::string, double> AdamVariantOptions::to_map(const char* name) const {
  EMBER_CHECK_VALUE(lr >= 0, "[", name, "] invalid learning rate: ", lr);
  EMBER_CHECK_VALUE(eps >= 0, "[", name, "] invalid epsilon value: ", eps);
  EMBER_CHECK_VALUE(beta1 >= 0 && beta1 < 1, "[", name, "] invalid beta parameter at index 0: ",
                    beta1);
  EMBER_CHECK_VALUE(beta2 >= 0 && beta2 < 1, "[", name, "] invalid beta parameter at index 1: ",
                    beta2);
  EMBER_CHECK_VALUE(weight_decay >= 0, "[", name, "] invalid weight_decay value: ", weight_decay);
  EMBER_CHECK_VALUE(momentum_decay >= 0, "[", name, "] invalid momentum_decay value: ",
                    momentum_decay);
  return {{"lr", lr},
          {"beta1", beta1},
          {"beta2", beta2},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"momentum_decay", momentum_decay},
          {"maximize", maximize ? 1.0 : 0.0}};
}

AdamVariantOptions AdamVariantOptions::from(const std::map<std::string, double>& g) {
  auto it = g.find("maximize");
  return AdamVariantOptions(g.at("lr"))
      .with_betas(g.at("beta1"), g.at("beta2"))
      .with_eps(g.at("eps"))
      .with_weight_decay(g.at("weight_decay"))
      .with_momentum_decay(g.count("momentum_decay") ? g.at("momentum_decay") : 4e-3)
      .with_maximize(it != g.end() && it->second != 0);
}

namespace {
// The gradient a step follows: negated to maximize, with L2 weight decay added.
Tensor step_grad(const Tensor& p, const Tensor& grad, const AdamVariantOptions& o) {
  Tensor g = o.maximize ? grad.neg() : grad;
  return o.weight_decay != 0 ? g.add(p, o.weight_decay) : g;
}
// Increments a step counter and returns the new count.
double next_step(const Tensor& step_t) {
  Tensor s = step_t;
  s.add_(1);
  return s.item<double>();
}
}  // namespace

void functional::adamax(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                        const std::vector<Tensor>& steps, const AdamVariantOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], m = exp_avgs[i], u = exp_infs[i];
    double step = next_step(steps[i]);
    Tensor grad = step_grad(p, grads[i], o);
    m.mul_(o.beta1).add_(grad, 1 - o.beta1);
    u.copy_(maximum(u.mul_(o.beta2), grad.abs().add_(o.eps)));
    p.addcdiv_(m, u, -o.lr / (1 - std::pow(o.beta1, step)));
  }
}

void functional::nadam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                       const std::vector<Tensor>& mu_products, const std::vector<Tensor>& steps,
                       const AdamVariantOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], m = exp_avgs[i], v = exp_avg_sqs[i], mu_product_t = mu_products[i];
    double step = next_step(steps[i]);
    Tensor grad = step_grad(p, grads[i], o);
    double bias2 = 1 - std::pow(o.beta2, step);
    double mu = o.beta1 * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay));
    double mu_next = o.beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay));
    // PyTorch keeps the product in a float32 tensor: round as it does.
    mu_product_t.mul_(mu);
    double mu_product = mu_product_t.item<double>();
    double mu_product_next = static_cast<float>(mu_product * mu * mu_next);
    m.mul_(o.beta1).add_(grad, 1 - o.beta1);
    v.mul_(o.beta2).addcmul_(grad, grad, 1 - o.beta2);
    Tensor denom = v.div(bias2).sqrt().add_(o.eps);
    p.addcdiv_(grad, denom, -o.lr * (1. - mu) / (1. - mu_product));
    p.addcdiv_(m, denom, -o.lr * mu_next / (1. - mu_product_next));
  }
}

void functional::radam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                       const std::vector<Tensor>& steps, const AdamVariantOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    double step = next_step(steps[i]);
    Tensor grad = step_grad(p, grads[i], o);
    double bias1 = 1 - std::pow(o.beta1, step), bias2 = 1 - std::pow(o.beta2, step);
    m.mul_(o.beta1).add_(grad, 1 - o.beta1);
    v.mul_(o.beta2).addcmul_(grad, grad, 1 - o.beta2);
    Tensor corrected = m / bias1;
    // The variance of the adaptive rate is tractable only after enough steps (rho_t > 5); before,
    // the step is momentum SGD's.
    double rho_inf = 2 / (1 - o.beta2) - 1;
    double rho_t = rho_inf - 2 * step * std::pow(o.beta2, step) / bias2;
    if (rho_t > 5.) {
      double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                              ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      Tensor adaptive = std::sqrt(bias2) / v.sqrt().add_(o.eps);
      p.add_(corrected * o.lr * adaptive * rect, -1.0);
    } else {
      p.add_(corrected * o.lr, -1.0);
    }
  }
}

namespace {
const char* variant_name(AdamVariant v) {
  switch (v) {
    case AdamVariant::Adamax:
      return "Adamax";
    case AdamVariant::NAdam:
      return "NAdam";
    case AdamVariant::RAdam:
      break;
  }
  return "RAdam";
}
}  // namespace

AdamVariantOptimizer::AdamVariantOptimizer(AdamVariant variant, std::vector<ParamGroup> groups,
                                           const AdamVariantOptions& o)
    : Optimizer(std::move(groups), o.to_map(variant_name(variant))), variant_(variant) {}

void AdamVariantOptimizer::step() {
  static const char* const kNames[] = {"Optimizer.step#Adamax.step", "Optimizer.step#NAdam.step",
                                       "Optimizer.step#RAdam.step"};
  profiler::RecordScope record(profiler::EventKind::Optimizer, kNames[static_cast<int>(variant_)]);
  for (ParamGroup& g : param_groups()) {
    std::vector<Tensor> params, grads, m, second, mu, steps;
    // The second moment is Adamax's exp_inf, the others' exp_avg_sq.
    const char* second_name = variant_ == AdamVariant::Adamax ? "exp_inf" : "exp_avg_sq";
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      auto& st = state(p);
      if (!st.count("step")) {
        st["step"] = scalar_tensor(0.0, kFloat32);
        st["exp_avg"] = zeros_like(p);
        st[second_name] = zeros_like(p);
        if (variant_ == AdamVariant::NAdam) st["mu_product"] = scalar_tensor(1.0, kFloat32);
      }
      params.push_back(p);
      grads.push_back(p.grad());
      m.push_back(st["exp_avg"]);
      second.push_back(st[second_name]);
      steps.push_back(st["step"]);
      if (variant_ == AdamVariant::NAdam) mu.push_back(st["mu_product"]);
    }
    AdamVariantOptions o = AdamVariantOptions::from(g.options);
    switch (variant_) {
      case AdamVariant::Adamax:
        functional::adamax(params, grads, m, second, steps, o);
        break;
      case AdamVariant::NAdam:
        functional::nadam(params, grads, m, second, mu, steps, o);
        break;
      case AdamVariant::RAdam:
        functional::radam(params, grads, m, second, steps, o);
        break;
    }
  }
}

}  // namespace ember::optim
