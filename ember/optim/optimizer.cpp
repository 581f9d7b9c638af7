#include "ember/optim/optimizer.h"

#include <set>

#include "ember/core/autograd_meta.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups, std::map<std::string, double> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK(!groups.empty(), "[optimizer] got an empty parameter list");
  for (auto& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  std::set<const TensorImpl*> seen;
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params) seen.insert(p.unsafe_impl());
  for (const Tensor& p : group.params) {
    EMBER_CHECK(p.defined(), "[optimizer] can't optimize an undefined tensor");
    EMBER_CHECK(p.is_leaf(), "[optimizer] can't optimize a non-leaf tensor (made by ",
                p.grad_fn() ? p.grad_fn()->name() : "?", ")");
    EMBER_CHECK(seen.insert(p.unsafe_impl()).second,
                "[optimizer] some parameters appear in more "
                "than one parameter group");
  }
  for (auto& [k, v] : defaults_) group.options.emplace(k, v);  // defaults fill what is unset
  groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& g : groups_)
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      if (set_to_none)
        p.mutable_grad() = Tensor();
      else
        p.mutable_grad().zero_();
    }
}

void Optimizer::set_lr(double lr) {
  for (ParamGroup& g : groups_) g.options["lr"] = lr;
}

double Optimizer::lr(size_t group) const {
  EMBER_CHECK(group < groups_.size(), "[optimizer] no parameter group ", group);
  return groups_[group].options.at("lr");
}

std::map<std::string, Tensor>& Optimizer::state(const Tensor& p) { return state_[p.unsafe_impl()]; }

nn::NamedTensors Optimizer::state_dict() const {
  nn::NamedTensors out;
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const Tensor& p : groups_[g].params) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end())
        for (auto& [name, t] : it->second)
          out.emplace_back("state." + std::to_string(index) + "." + name, t.detach());
      ++index;
    }
    for (auto& [k, v] : groups_[g].options)
      out.emplace_back("param_groups." + std::to_string(g) + "." + k, scalar_tensor(v, kFloat64));
  }
  return out;
}

void Optimizer::load_state_dict(const nn::NamedTensors& state) {
  std::vector<Tensor*> params;
  for (ParamGroup& g : groups_)
    for (Tensor& p : g.params) params.push_back(&p);
  // Validate everything first: a failed load must change nothing.
  for (auto& [key, t] : state) {
    size_t dot = key.find('.'), dot2 = key.find('.', dot + 1);
    EMBER_CHECK(dot != std::string::npos && dot2 != std::string::npos,
                "[optimizer.load_state_dict] "
                "malformed key '",
                key, "'");
    std::string kind = key.substr(0, dot);
    size_t index = std::stoul(key.substr(dot + 1, dot2 - dot - 1));
    if (kind == "state") {
      EMBER_CHECK(index < params.size(), "[optimizer.load_state_dict] state for parameter ", index,
                  " but the optimizer has ", params.size(), " parameters");
      std::string name = key.substr(dot2 + 1);
      bool scalar_state = name == "step";
      EMBER_CHECK(scalar_state || t.sizes() == params[index]->sizes(),
                  "[optimizer.load_state_dict] ", key, " has shape ", t.sizes(), " but parameter ",
                  index, " has shape ", params[index]->sizes());
    } else {
      EMBER_CHECK(kind == "param_groups" && index < groups_.size(),
                  "[optimizer.load_state_dict] "
                  "unexpected key '",
                  key, "' (the optimizer has ", groups_.size(), " groups)");
    }
  }
  NoGradGuard no_grad;
  for (auto& [key, t] : state) {
    size_t dot = key.find('.'), dot2 = key.find('.', dot + 1);
    size_t index = std::stoul(key.substr(dot + 1, dot2 - dot - 1));
    std::string name = key.substr(dot2 + 1);
    if (key.rfind("state.", 0) == 0) {
      const Tensor& p = *params[index];
      // The step count stays on the CPU (reading it must not wait for a GPU), like PyTorch's.
      state_[p.unsafe_impl()][name] = name == "step" ? t.to(Device(kCPU, 0), kFloat64, false, true)
                                                     : t.to(p.device(), p.dtype(), false, true);
    } else {
      groups_[index].options[name] = t.item<double>();
    }
  }
}

}  // namespace ember::optim
