#include "ember/optim/optimizer.h"

#include <cctype>
#include <set>

#include "ember/core/autograd_meta.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups, std::map<std::string, double> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK_VALUE(!groups.empty(), "[optimizer] got an empty parameter list");
  for (auto& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  std::set<const TensorImpl*> seen;
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params) seen.insert(p.unsafe_impl());
  for (const Tensor& p : group.params) {
    EMBER_CHECK_VALUE(p.defined(), "[optimizer] can't optimize an undefined tensor");
    EMBER_CHECK_VALUE(p.is_leaf(), "[optimizer] can't optimize a non-leaf tensor (made by ",
                p.grad_fn() ? p.grad_fn()->name() : "?", ")");
    EMBER_CHECK_VALUE(seen.insert(p.unsafe_impl()).second,
                "[optimizer] some parameters appear in more than one parameter group");
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

namespace {
// "state.<index>.<name>" or "param_groups.<index>.<name>".
struct StateKey {
  std::string kind;
  size_t index = 0;
  std::string name;
};
StateKey parse_key(const std::string& key) {
  size_t dot = key.find('.'), dot2 = dot == std::string::npos ? dot : key.find('.', dot + 1);
  bool ok =
      dot2 != std::string::npos && dot2 > dot + 1 && dot2 + 1 < key.size() && dot2 - dot - 1 <= 9;
  for (size_t i = dot + 1; ok && i < dot2; ++i)
    ok = std::isdigit(static_cast<unsigned char>(key[i]));
  EMBER_CHECK(ok, "[optimizer.load_state_dict] malformed key '", key,
              "' (expected state.<index>.<name> or param_groups.<index>.<name>)");
  return {key.substr(0, dot), std::stoul(key.substr(dot + 1, dot2 - dot - 1)),
          key.substr(dot2 + 1)};
}
}  // namespace

void Optimizer::load_state_dict(const nn::NamedTensors& state) {
  std::vector<Tensor*> params;
  for (ParamGroup& g : groups_)
    for (Tensor& p : g.params) params.push_back(&p);
  // Validate everything first: a failed load must change nothing.
  std::vector<StateKey> keys;
  for (auto& [key, t] : state) {
    const StateKey& k = keys.emplace_back(parse_key(key));
    EMBER_CHECK(t.defined(), "[optimizer.load_state_dict] ", key, " is an undefined tensor");
    if (k.kind == "state") {
      EMBER_CHECK(k.index < params.size(), "[optimizer.load_state_dict] state for parameter ",
                  k.index, " but the optimizer has ", params.size(), " parameters");
      if (k.name == "step")
        EMBER_CHECK(t.numel() == 1, "[optimizer.load_state_dict] ", key,
                    " must hold one number, got shape ", t.sizes());
      else
        EMBER_CHECK(t.sizes() == params[k.index]->sizes(), "[optimizer.load_state_dict] ", key,
                    " has shape ", t.sizes(), " but parameter ", k.index, " has shape ",
                    params[k.index]->sizes());
    } else {
      EMBER_CHECK(k.kind == "param_groups" && k.index < groups_.size(),
                  "[optimizer.load_state_dict] unexpected key '", key, "' (the optimizer has ",
                  groups_.size(), " groups)");
      EMBER_CHECK(t.numel() == 1, "[optimizer.load_state_dict] ", key,
                  " must hold one number, got shape ", t.sizes());
      // An option this optimizer does not have would be kept and saved again, but never used
      // (found by fuzzing: "be" for "beta1" survived a failed load's rollback). "initial_lr" is
      // the schedulers' (lr_scheduler.h), which resume from it.
      const auto& known = groups_[k.index].options;
      if (!known.count(k.name) && !defaults_.count(k.name) && k.name != "initial_lr") {
        std::string names;
        for (auto& [name, v] : known) names += (names.empty() ? "" : ", ") + name;
        EMBER_FAIL("[optimizer.load_state_dict] unknown option '", k.name, "' in ", key,
                   " (this optimizer's options are ", names, ")");
      }
    }
  }
  // The loaded state replaces the old one (parameters it does not mention start afresh).
  NoGradGuard no_grad;
  state_.clear();
  for (size_t i = 0; i < state.size(); ++i) {
    const StateKey& k = keys[i];
    const Tensor& t = state[i].second;
    if (k.kind == "state") {
      const Tensor& p = *params[k.index];
      // The step count stays on the CPU (reading it must not wait for a GPU), like PyTorch's.
      state_[p.unsafe_impl()][k.name] = k.name == "step"
                                            ? t.to(Device(kCPU, 0), kFloat64, false, true)
                                            : t.to(p.device(), p.dtype(), false, true);
    } else {
      groups_[k.index].options[k.name] = t.item<double>();
    }
  }
}

}  // namespace ember::optim
