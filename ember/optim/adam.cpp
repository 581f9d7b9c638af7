#include "ember/optim/adam.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"

namespace ember::optim {
namespace {
std::map<std::string, double> defaults(const AdamOptions& o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "[Adam] invalid learning rate: ", o.lr);
  EMBER_CHECK_VALUE(o.eps >= 0, "[Adam] invalid epsilon value: ", o.eps);
  EMBER_CHECK_VALUE(o.beta1 >= 0 && o.beta1 < 1, "[Adam] invalid beta parameter at index 0: ", o.beta1);
  EMBER_CHECK_VALUE(o.beta2 >= 0 && o.beta2 < 1, "[Adam] invalid beta parameter at index 1: ", o.beta2);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "[Adam] invalid weight_decay value: ", o.weight_decay);
  return {{"lr", o.lr},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0}};
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

void Adam::step() {
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    double lr = g.options["lr"], b1 = g.options["beta1"], b2 = g.options["beta2"];
    double eps = g.options["eps"], wd = g.options["weight_decay"];
    bool amsgrad = g.options["amsgrad"] != 0;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      auto& st = state(p);
      if (!st.count("step")) {
        st["step"] = scalar_tensor(0.0, kFloat64);
        st["exp_avg"] = zeros_like(p);
        st["exp_avg_sq"] = zeros_like(p);
        if (amsgrad) st["max_exp_avg_sq"] = zeros_like(p);
      }
      Tensor& step_t = st["step"];
      double step = step_t.item<double>() + 1;
      step_t.fill_(step);
      if (wd != 0) {
        if (decoupled_)
          p.mul_(1 - lr * wd);
        else
          grad = grad.add(p, wd);
      }
      Tensor& m = st["exp_avg"];
      Tensor& v = st["exp_avg_sq"];
      m.lerp_(grad, 1 - b1);
      v.mul_(b2).addcmul_(grad, grad, 1 - b2);
      double bias1 = 1 - std::pow(b1, step), bias2 = 1 - std::pow(b2, step);
      Tensor second = v;
      if (amsgrad) {
        Tensor& vmax = st["max_exp_avg_sq"];
        vmax.copy_(maximum(vmax, v));
        second = vmax;
      }
      Tensor denom = (second.sqrt() / std::sqrt(bias2)).add_(eps);
      p.addcdiv_(m, denom, -lr / bias1);
    }
  }
}

}  // namespace ember::optim
