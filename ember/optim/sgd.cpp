#include "ember/optim/sgd.h"

#include "ember/core/grad_mode.h"
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
          {"nesterov", o.nesterov ? 1.0 : 0.0}};
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : SGD(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}
SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& o)
    : Optimizer(std::move(groups), defaults(o)) {}

void SGD::step() {
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    double lr = g.options["lr"], momentum = g.options["momentum"],
           dampening = g.options["dampening"];
    double wd = g.options["weight_decay"];
    bool nesterov = g.options["nesterov"] != 0;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      Tensor d_p = p.grad();
      if (wd != 0) d_p = d_p.add(p, wd);
      if (momentum != 0) {
        auto& st = state(p);
        Tensor& buf = st["momentum_buffer"];
        if (!buf.defined())
          buf = d_p.clone();
        else
          buf.mul_(momentum).add_(d_p, 1 - dampening);
        d_p = nesterov ? d_p.add(buf, momentum) : buf;
      }
      p.add_(d_p, -lr);
    }
  }
}

}  // namespace ember::optim
