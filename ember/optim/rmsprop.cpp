#include "ember/optim/rmsprop.h"

#include "ember/core/grad_mode.h"
#include "ember/core/profiler_events.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"

namespace ember::optim {
namespace {
bool flag(const std::map<std::string, double>& g, const char* key) {
  auto it = g.find(key);
  return it != g.end() && it->second != 0;
}
}  // namespace

std::map<std::string, double> RMSpropOptions::to_map() const {
  EMBER_CHECK_VALUE(lr >= 0, "[RMSprop] invalid learning rate: ", lr);
  EMBER_CHECK_VALUE(eps >= 0, "[RMSprop] invalid epsilon value: ", eps);
  EMBER_CHECK_VALUE(momentum >= 0, "[RMSprop] invalid momentum value: ", momentum);
  EMBER_CHECK_VALUE(weight_decay >= 0, "[RMSprop] invalid weight_decay value: ", weight_decay);
  EMBER_CHECK_VALUE(alpha >= 0, "[RMSprop] invalid alpha value: ", alpha);
  return {{"lr", lr},       {"alpha", alpha},
          {"eps", eps},     {"weight_decay", weight_decay},
          {"momentum", momentum}, {"centered", centered ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}
RMSpropOptions RMSpropOptions::from(const std::map<std::string, double>& g) {
  return RMSpropOptions(g.at("lr"))
      .with_alpha(g.at("alpha"))
      .with_eps(g.at("eps"))
      .with_weight_decay(g.at("weight_decay"))
      .with_momentum(g.at("momentum"))
      .with_centered(flag(g, "centered"))
      .with_maximize(flag(g, "maximize"));
}

std::map<std::string, double> AdagradOptions::to_map() const {
  EMBER_CHECK_VALUE(lr >= 0, "[Adagrad] invalid learning rate: ", lr);
  EMBER_CHECK_VALUE(lr_decay >= 0, "[Adagrad] invalid lr_decay value: ", lr_decay);
  EMBER_CHECK_VALUE(weight_decay >= 0, "[Adagrad] invalid weight_decay value: ", weight_decay);
  EMBER_CHECK_VALUE(initial_accumulator_value >= 0,
                    "[Adagrad] invalid initial_accumulator_value value: ",
                    initial_accumulator_value);
  EMBER_CHECK_VALUE(eps >= 0, "[Adagrad] invalid epsilon value: ", eps);
  return {{"lr", lr},
          {"lr_decay", lr_decay},
          {"weight_decay", weight_decay},
          {"initial_accumulator_value", initial_accumulator_value},
          {"eps", eps},
          {"maximize", maximize ? 1.0 : 0.0}};
}
AdagradOptions AdagradOptions::from(const std::map<std::string, double>& g) {
  return AdagradOptions(g.at("lr"))
      .with_lr_decay(g.at("lr_decay"))
      .with_weight_decay(g.at("weight_decay"))
      .with_initial_accumulator_value(g.at("initial_accumulator_value"))
      .with_eps(g.at("eps"))
      .with_maximize(flag(g, "maximize"));
}

std::map<std::string, double> AdadeltaOptions::to_map() const {
  EMBER_CHECK_VALUE(lr >= 0, "[Adadelta] invalid learning rate: ", lr);
  EMBER_CHECK_VALUE(rho >= 0 && rho <= 1, "[Adadelta] invalid rho value: ", rho);
  EMBER_CHECK_VALUE(eps >= 0, "[Adadelta] invalid epsilon value: ", eps);
  EMBER_CHECK_VALUE(weight_decay >= 0, "[Adadelta] invalid weight_decay value: ", weight_decay);
  return {{"lr", lr},
          {"rho", rho},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"maximize", maximize ? 1.0 : 0.0}};
}
AdadeltaOptions AdadeltaOptions::from(const std::map<std::string, double>& g) {
  return AdadeltaOptions(g.at("lr"))
      .with_rho(g.at("rho"))
      .with_eps(g.at("eps"))
      .with_weight_decay(g.at("weight_decay"))
      .with_maximize(flag(g, "maximize"));
}

void functional::rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& square_avgs,
                         const std::vector<Tensor>& grad_avgs,
                         const std::vector<Tensor>& momentum_buffers, const RMSpropOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], square_avg = square_avgs[i];
    Tensor grad = o.maximize ? grads[i].neg() : grads[i];
    if (o.weight_decay != 0) grad = grad.add(p, o.weight_decay);
    square_avg.mul_(o.alpha).addcmul_(grad, grad, 1 - o.alpha);
    Tensor avg;
    if (o.centered) {
      Tensor grad_avg = grad_avgs.at(i);
      grad_avg.mul_(o.alpha).add_(grad, 1 - o.alpha);
      avg = square_avg.addcmul(grad_avg, grad_avg, -1).sqrt_();
    } else {
      avg = square_avg.sqrt();
    }
    avg.add_(o.eps);
    if (o.momentum > 0) {
      Tensor buf = momentum_buffers.at(i);
      buf.mul_(o.momentum).addcdiv_(grad, avg);
      p.add_(buf, -o.lr);
    } else {
      p.addcdiv_(grad, avg, -o.lr);
    }
  }
}

void functional::adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& state_sums, const std::vector<Tensor>& steps,
                         const AdagradOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], sum = state_sums[i], step_t = steps[i];
    step_t.add_(1);
    double step = step_t.item<double>();
    Tensor grad = o.maximize ? grads[i].neg() : grads[i];
    if (o.weight_decay != 0) grad = grad.add(p, o.weight_decay);
    double clr = o.lr / (1 + (step - 1) * o.lr_decay);
    sum.addcmul_(grad, grad, 1);
    p.addcdiv_(grad, sum.sqrt().add_(o.eps), -clr);
  }
}

void functional::adadelta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& square_avgs,
                          const std::vector<Tensor>& acc_deltas, const AdadeltaOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], square_avg = square_avgs[i], acc_delta = acc_deltas[i];
    Tensor grad = o.maximize ? grads[i].neg() : grads[i];
    if (o.weight_decay != 0) grad = grad.add(p, o.weight_decay);
    square_avg.mul_(o.rho).addcmul_(grad, grad, 1 - o.rho);
    Tensor std = square_avg.add(o.eps).sqrt_();
    Tensor delta = acc_delta.add(o.eps).sqrt_().div_(std).mul_(grad);
    acc_delta.mul_(o.rho).addcmul_(delta, delta, 1 - o.rho);
    p.add_(delta, -o.lr);
  }
}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& o)
    : Optimizer(std::move(groups), o.to_map()) {}

void RMSprop::step() {
  profiler::RecordScope record(profiler::EventKind::Optimizer, "Optimizer.step#RMSprop.step");
  for (ParamGroup& g : param_groups()) {
    RMSpropOptions o = RMSpropOptions::from(g.options);
    std::vector<Tensor> params, grads, square_avgs, grad_avgs, buffers;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      auto& st = state(p);
      if (!st.count("square_avg")) {
        st["step"] = scalar_tensor(0.0, kFloat64);
        st["square_avg"] = zeros_like(p);
      }
      if (o.momentum > 0 && !st.count("momentum_buffer")) st["momentum_buffer"] = zeros_like(p);
      if (o.centered && !st.count("grad_avg")) st["grad_avg"] = zeros_like(p);
      st["step"].add_(1);
      params.push_back(p);
      grads.push_back(p.grad());
      square_avgs.push_back(st["square_avg"]);
      if (o.momentum > 0) buffers.push_back(st["momentum_buffer"]);
      if (o.centered) grad_avgs.push_back(st["grad_avg"]);
    }
    functional::rmsprop(params, grads, square_avgs, grad_avgs, buffers, o);
  }
}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& o)
    : Optimizer(std::move(groups), o.to_map()) {
  // As PyTorch, the state exists from the start: the sums begin at initial_accumulator_value.
  for (ParamGroup& g : param_groups()) {
    double init = g.options.at("initial_accumulator_value");
    for (Tensor& p : g.params) {
      auto& st = state(p);
      st["step"] = scalar_tensor(0.0, kFloat64);
      st["sum"] = full_like(p, init);
    }
  }
}

void Adagrad::step() {
  profiler::RecordScope record(profiler::EventKind::Optimizer, "Optimizer.step#Adagrad.step");
  for (ParamGroup& g : param_groups()) {
    std::vector<Tensor> params, grads, sums, steps;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      auto& st = state(p);
      params.push_back(p);
      grads.push_back(p.grad());
      sums.push_back(st.at("sum"));
      steps.push_back(st.at("step"));
    }
    functional::adagrad(params, grads, sums, steps, AdagradOptions::from(g.options));
  }
}

Adadelta::Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& o)
    : Optimizer(std::move(groups), o.to_map()) {}

void Adadelta::step() {
  profiler::RecordScope record(profiler::EventKind::Optimizer, "Optimizer.step#Adadelta.step");
  for (ParamGroup& g : param_groups()) {
    std::vector<Tensor> params, grads, square_avgs, acc_deltas;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      auto& st = state(p);
      if (!st.count("square_avg")) {
        st["step"] = scalar_tensor(0.0, kFloat64);
        st["square_avg"] = zeros_like(p);
        st["acc_delta"] = zeros_like(p);
      }
      st["step"].add_(1);
      params.push_back(p);
      grads.push_back(p.grad());
      square_avgs.push_back(st["square_avg"]);
      acc_deltas.push_back(st["acc_delta"]);
    }
    functional::adadelta(params, grads, square_avgs, acc_deltas, AdadeltaOptions::from(g.options));
  }
}

}  // namespace ember::optim
