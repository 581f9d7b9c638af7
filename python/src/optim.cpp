// ember.optim's C++ part: one step of each algorithm over lists of tensors (ember::optim::functional,
// the math the C++ optimizers run too). The optimizers themselves are Python classes
// (ember/optim/), so param_groups are plain dicts and Python subclasses work as in PyTorch.
#include "bind.h"

namespace ember::python {
namespace {

std::vector<Tensor> tensors(py::handle h) {
  std::vector<Tensor> out;
  for (py::handle item : h) out.push_back(as_tensor(item));
  return out;
}

// Runs a step without the GIL over the tensor lists converted first.
template <typename F>
void step(F&& fn) {
  ReleaseGil no_gil;
  fn();
}

}  // namespace

void bind_optim(py::module_& m) {
  py::module_ o = m.def_submodule("_optim", "ember.optim's C++ part: one step of each algorithm");
  o.def(
      "sgd",
      [](py::handle params, py::handle grads, py::handle buffers, double lr, double momentum,
         double dampening, double weight_decay, bool nesterov, bool maximize) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), b;
        for (py::handle h : buffers) b.push_back(h.is_none() ? Tensor() : as_tensor(h));
        optim::SGDOptions opt(lr);
        opt.with_momentum(momentum).with_dampening(dampening).with_weight_decay(weight_decay);
        opt.with_nesterov(nesterov).with_maximize(maximize);
        step([&] { optim::functional::sgd(p, g, b, opt); });
        py::list out;
        for (const Tensor& t : b) out.append(t.defined() ? py::cast(t) : py::none());
        return out;
      },
      "params"_a, "grads"_a, "momentum_buffers"_a, py::kw_only(), "lr"_a, "momentum"_a,
      "dampening"_a, "weight_decay"_a, "nesterov"_a, "maximize"_a,
      "One SGD step; returns the momentum buffers (made on the first step).");
  o.def(
      "adam",
      [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
         py::handle max_exp_avg_sqs, py::handle steps, bool amsgrad, double beta1, double beta2,
         double lr, double weight_decay, double eps, bool maximize, bool decoupled) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), m = tensors(exp_avgs),
                            v = tensors(exp_avg_sqs), vmax = tensors(max_exp_avg_sqs),
                            s = tensors(steps);
        optim::AdamOptions opt(lr);
        opt.with_betas(beta1, beta2).with_eps(eps).with_weight_decay(weight_decay);
        opt.with_amsgrad(amsgrad).with_maximize(maximize);
        step([&] { optim::functional::adam(p, g, m, v, vmax, s, opt, decoupled); });
      },
      "params"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a, "max_exp_avg_sqs"_a, "state_steps"_a,
      py::kw_only(), "amsgrad"_a, "beta1"_a, "beta2"_a, "lr"_a, "weight_decay"_a, "eps"_a,
      "maximize"_a, "decoupled_weight_decay"_a = false, "One Adam (or AdamW) step.");
  o.def(
      "rmsprop",
      [](py::handle params, py::handle grads, py::handle square_avgs, py::handle grad_avgs,
         py::handle momentum_buffers, double lr, double alpha, double eps, double weight_decay,
         double momentum, bool centered, bool maximize) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), sq = tensors(square_avgs),
                            ga = tensors(grad_avgs), mb = tensors(momentum_buffers);
        optim::RMSpropOptions opt(lr);
        opt.with_alpha(alpha).with_eps(eps).with_weight_decay(weight_decay);
        opt.with_momentum(momentum).with_centered(centered).with_maximize(maximize);
        step([&] { optim::functional::rmsprop(p, g, sq, ga, mb, opt); });
      },
      "params"_a, "grads"_a, "square_avgs"_a, "grad_avgs"_a, "momentum_buffer_list"_a,
      py::kw_only(), "lr"_a, "alpha"_a, "eps"_a, "weight_decay"_a, "momentum"_a, "centered"_a,
      "maximize"_a, "One RMSprop step.");
  o.def(
      "adagrad",
      [](py::handle params, py::handle grads, py::handle state_sums, py::handle steps, double lr,
         double weight_decay, double lr_decay, double eps, bool maximize) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), sums = tensors(state_sums),
                            s = tensors(steps);
        optim::AdagradOptions opt(lr);
        opt.with_lr_decay(lr_decay).with_weight_decay(weight_decay).with_eps(eps);
        opt.with_maximize(maximize);
        step([&] { optim::functional::adagrad(p, g, sums, s, opt); });
      },
      "params"_a, "grads"_a, "state_sums"_a, "state_steps"_a, py::kw_only(), "lr"_a,
      "weight_decay"_a, "lr_decay"_a, "eps"_a, "maximize"_a, "One Adagrad step.");
  o.def(
      "adadelta",
      [](py::handle params, py::handle grads, py::handle square_avgs, py::handle acc_deltas,
         double lr, double rho, double eps, double weight_decay, bool maximize) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), sq = tensors(square_avgs),
                            acc = tensors(acc_deltas);
        optim::AdadeltaOptions opt(lr);
        opt.with_rho(rho).with_eps(eps).with_weight_decay(weight_decay).with_maximize(maximize);
        step([&] { optim::functional::adadelta(p, g, sq, acc, opt); });
      },
      "params"_a, "grads"_a, "square_avgs"_a, "acc_deltas"_a, py::kw_only(), "lr"_a, "rho"_a,
      "eps"_a, "weight_decay"_a, "maximize"_a, "One Adadelta step.");
  auto variant = [](double lr, double beta1, double beta2, double eps, double weight_decay,
                    double momentum_decay, bool maximize) {
    optim::AdamVariantOptions opt(lr);
    opt.with_betas(beta1, beta2).with_eps(eps).with_weight_decay(weight_decay);
    return opt.with_momentum_decay(momentum_decay).with_maximize(maximize);
  };
  o.def(
      "adamax",
      [variant](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_infs,
                py::handle steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), m = tensors(exp_avgs),
                            u = tensors(exp_infs), s = tensors(steps);
        auto opt = variant(lr, beta1, beta2, eps, weight_decay, 0, maximize);
        step([&] { optim::functional::adamax(p, g, m, u, s, opt); });
      },
      "params"_a, "grads"_a, "exp_avgs"_a, "exp_infs"_a, "state_steps"_a, py::kw_only(), "lr"_a,
      "beta1"_a, "beta2"_a, "eps"_a, "weight_decay"_a, "maximize"_a, "One Adamax step.");
  o.def(
      "nadam",
      [variant](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
                py::handle mu_products, py::handle steps, double lr, double beta1, double beta2,
                double eps, double weight_decay, double momentum_decay) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), m = tensors(exp_avgs),
                            v = tensors(exp_avg_sqs), mu = tensors(mu_products),
                            s = tensors(steps);
        auto opt = variant(lr, beta1, beta2, eps, weight_decay, momentum_decay, false);
        step([&] { optim::functional::nadam(p, g, m, v, mu, s, opt); });
      },
      "params"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a, "mu_products"_a, "state_steps"_a,
      py::kw_only(), "lr"_a, "beta1"_a, "beta2"_a, "eps"_a, "weight_decay"_a,
      "momentum_decay"_a, "One NAdam step.");
  o.def(
      "radam",
      [variant](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
                py::handle steps, double lr, double beta1, double beta2, double eps,
                double weight_decay) {
        std::vector<Tensor> p = tensors(params), g = tensors(grads), m = tensors(exp_avgs),
                            v = tensors(exp_avg_sqs), s = tensors(steps);
        auto opt = variant(lr, beta1, beta2, eps, weight_decay, 0, false);
        step([&] { optim::functional::radam(p, g, m, v, s, opt); });
      },
      "params"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a, "state_steps"_a, py::kw_only(),
      "lr"_a, "beta1"_a, "beta2"_a, "eps"_a, "weight_decay"_a, "One RAdam step.");
}

}  // namespace ember::python
