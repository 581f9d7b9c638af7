#include "ember/optim/adam.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/core/profiler_events.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"

namespace ember::optim {
namespace {
std::map<std::string, double> defaults(const AdamOptions& o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "[Adam] invalid learning rate: ", o.lr);
  EMBER_CHECK_VALUE(o.eps >= 0, "[Adam] invalid epsilon value: ", o.eps);
  EMBER_CHECK_VALUE(o.beta1 >= 0 && o.beta1 < 1,
                    "[Adam] invalid beta parameter at index 0: ", o.beta1);
  EMBER_CHECK_VALUE(o.beta2 >= 0 && o.beta2 < 1,
                    "[Adam] invalid beta parameter at index 1: ", o.beta2);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "[Adam] invalid weight_decay value: ", o.weight_decay);
  return {{"lr", o.lr},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}
}  // namespace

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o)
    : Adam(std::vector<ParamGroup>{{std::move(params), {}}}, o, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& o)
    : Adam(std::move(groups), o, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& o, bool decoupled)
    : Optimizer(std::move(groups), defaults(o)), decoupled_(decoupled) {}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& o)
    : Adam(std::vector<ParamGroup>{{std::move(params), {}}}, o, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamOptions& o)
    : Adam(std::move(groups), o, true) {}

AdamOptions AdamOptions::from(const std::map<std::string, double>& g) {
  return AdamOptions(g.at("lr"))
      .with_betas(g.at("beta1"), g.at("beta2"))
      .with_eps(g.at("eps"))
      .with_weight_decay(g.at("weight_decay"))
      .with_amsgrad(g.at("amsgrad") != 0)
      .with_maximize(g.count("maximize") && g.at("maximize") != 0);
}

void functional::adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                      const std::vector<Tensor>& max_exp_avg_sqs,
                      const std::vector<Tensor>& steps, const AdamOptions& o, bool decoupled) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    Tensor grad = o.maximize ? grads[i].neg() : grads[i];
    Tensor step_t = steps[i];
    step_t.add_(1);
    double step = step_t.item<double>();
    if (o.weight_decay != 0) {
      if (decoupled)
        p.mul_(1 - o.lr * o.weight_decay);
      else
        grad = grad.add(p, o.weight_decay);
    }
    m.mul_(o.beta1).add_(grad, 1 - o.beta1);
    v.mul_(o.beta2).addcmul_(grad, grad, 1 - o.beta2);
    double bias1 = 1 - std::pow(o.beta1, step), bias2 = 1 - std::pow(o.beta2, step);
    Tensor second = v;
    if (o.amsgrad) {
      Tensor vmax = max_exp_avg_sqs.at(i);
      vmax.copy_(maximum(vmax, v));
      second = vmax;
    }
    Tensor denom = (second.sqrt() / std::sqrt(bias2)).add_(o.eps);
    p.addcdiv_(m, denom, -o.lr / bias1);
  }
}

void Adam::step() {
  profiler::RecordScope record(profiler::EventKind::Optimizer, "Optimizer.step#Adam.step");
  for (ParamGroup& g : param_groups()) {
    AdamOptions o = AdamOptions::from(g.options);
    std::vector<Tensor> params, grads, m, v, vmax, steps;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      auto& st = state(p);
      if (!st.count("step")) {
        st["step"] = scalar_tensor(0.0, kFloat64);
        st["exp_avg"] = zeros_like(p);
        st["exp_avg_sq"] = zeros_like(p);
      }
      if (o.amsgrad && !st.count("max_exp_avg_sq")) st["max_exp_avg_sq"] = zeros_like(p);
      params.push_back(p);
      grads.push_back(p.grad());
      m.push_back(st["exp_avg"]);
      v.push_back(st["exp_avg_sq"]);
      if (o.amsgrad) vmax.push_back(st["max_exp_avg_sq"]);
      steps.push_back(st["step"]);
    }
    functional::adam(params, grads, m, v, vmax, steps, o, decoupled_);
  }
}

}  // namespace ember::optim
