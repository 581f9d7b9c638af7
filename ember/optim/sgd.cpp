#include "ember/optim/sgd.h"

#include "ember/core/grad_mode.h"
#include "ember/core/profiler_events.h"
#include "ember/ops/elementwise.h"

namespace ember::optim {
namespace {
std::map<std::string, double> defaults(const SGDOptions& o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "[SGD] invalid learning rate: ", o.lr);
  EMBER_CHECK_VALUE(o.momentum >= 0, "[SGD] invalid momentum value: ", o.momentum);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "[SGD] invalid weight_decay value: ", o.weight_decay);
  EMBER_CHECK_VALUE(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
                    "[SGD] Nesterov momentum requires a momentum and zero dampening");
  return {{"lr", o.lr},
          {"momentum", o.momentum},
          {"dampening", o.dampening},
          {"weight_decay", o.weight_decay},
          {"nesterov", o.nesterov ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : SGD(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}
SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& o)
    : Optimizer(std::move(groups), defaults(o)) {}

SGDOptions SGDOptions::from(const std::map<std::string, double>& g) {
  return SGDOptions(g.at("lr"))
      .with_momentum(g.at("momentum"))
      .with_dampening(g.at("dampening"))
      .with_weight_decay(g.at("weight_decay"))
      .with_nesterov(g.at("nesterov") != 0)
      .with_maximize(g.count("maximize") && g.at("maximize") != 0);
}

void functional::sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     std::vector<Tensor>& momentum_buffers, const SGDOptions& o) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    Tensor d_p = o.maximize ? grads[i].neg() : grads[i];
    if (o.weight_decay != 0) d_p = d_p.add(p, o.weight_decay);
    if (o.momentum != 0) {
      Tensor& buf = momentum_buffers.at(i);
      if (!buf.defined())
        buf = d_p.clone();
      else
        buf.mul_(o.momentum).add_(d_p, 1 - o.dampening);
      d_p = o.nesterov ? d_p.add(buf, o.momentum) : buf;
    }
    p.add_(d_p, -o.lr);
  }
}

void SGD::step() {
  profiler::RecordScope record(profiler::EventKind::Optimizer, "Optimizer.step#SGD.step");
  for (ParamGroup& g : param_groups()) {
    std::vector<Tensor> params, grads, buffers;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      params.push_back(p);
      grads.push_back(p.grad());
      auto it = state(p).find("momentum_buffer");
      buffers.push_back(it == state(p).end() ? Tensor() : it->second);
    }
    SGDOptions o = SGDOptions::from(g.options);
    functional::sgd(params, grads, buffers, o);
    if (o.momentum != 0)
      for (size_t i = 0; i < params.size(); ++i) state(params[i])["momentum_buffer"] = buffers[i];
  }
}

}  // namespace ember::optim
