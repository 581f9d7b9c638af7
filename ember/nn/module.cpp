#include "ember/nn/module.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <typeinfo>

#include "ember/core/grad_mode.h"
#include "ember/core/scope_guard.h"
#include "ember/ops/copy.h"

namespace ember::nn {
namespace {
thread_local bool t_skip_init = false;
}

bool Module::should_initialize() { return !t_skip_init; }

Tensor Module::uninitialized(const Shape& sizes) {
  return t_skip_init ? empty_strided(sizes, Shape(sizes.size(), 0)) : empty(sizes);
}

Tensor Module::forward(const Tensor&) {
  EMBER_FAIL("[", name(), "] this module has no single-tensor forward");
}

// Note [Module calls]: a module is run through operator() (or call() for other signatures), never
// by calling forward directly, so that hooks registered on it run wherever it is used: inside a
// Sequential, a model, DDP or DataParallel. FSDP2's fully_shard is two such hooks (gather before,
// reshard after); PyTorch's forward hooks are the same idea. With no hook registered, a call
// costs two empty-list checks.
Tensor Module::operator()(const Tensor& x) {
  if (forward_pre_hooks_.empty() && forward_hooks_.empty()) return forward(x);
  return call({x}, [this](const std::vector<Tensor>& in) {
    EMBER_CHECK(in.size() == 1, "[", name(), "] a forward pre-hook left ", in.size(),
                " inputs for a forward of one tensor");
    return std::vector<Tensor>{forward(in[0])};
  })[0];
}

std::vector<Tensor> Module::call(
    std::vector<Tensor> inputs,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body) {
  forward_pre_hooks_.for_each([&](ForwardPreHook& hook) { hook(*this, inputs); });
  std::vector<Tensor> outputs = body(inputs);
  forward_hooks_.for_each([&](ForwardHook& hook) { hook(*this, inputs, outputs); });
  EMBER_CHECK(!outputs.empty(), "[", name(), "] a forward hook left no outputs");
  return outputs;
}

RemovableHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  return forward_pre_hooks_.add(std::move(hook));
}

RemovableHandle Module::register_forward_hook(ForwardHook hook) {
  return forward_hooks_.add(std::move(hook));
}

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  EMBER_CHECK(!name.empty() && name.find('.') == std::string::npos,
              "[register_parameter] invalid parameter name '", name,
              "' (it must be non-empty and contain no '.')");
  check_new_name("register_parameter", name);
  if (t.defined() && requires_grad) t.requires_grad_(true);
  parameters_.push_back({name, std::make_unique<Tensor>(std::move(t))});
  return *parameters_.back().tensor;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t, bool persistent) {
  EMBER_CHECK(!name.empty() && name.find('.') == std::string::npos,
              "[register_buffer] invalid buffer name '", name, "'");
  check_new_name("register_buffer", name);
  buffers_.push_back({name, std::make_unique<Tensor>(std::move(t)), persistent});
  return *buffers_.back().tensor;
}

bool Module::is_persistent(const std::string& buffer) const {
  for (const Slot& s : buffers_)
    if (s.name == buffer) return s.persistent;
  EMBER_FAIL("[is_persistent] ", name(), " has no buffer '", buffer, "'");
}

void Module::set_persistent(const std::string& buffer, bool persistent) {
  for (Slot& s : buffers_)
    if (s.name == buffer) return void(s.persistent = persistent);
  EMBER_FAIL("[set_persistent] ", name(), " has no buffer '", buffer, "'");
}

void Module::check_new_name(const char* op, const std::string& name) const {
  for (const std::vector<Slot>* slots : {&parameters_, &buffers_})
    for (const Slot& s : *slots)
      EMBER_CHECK(s.name != name, "[", op, "] ", this->name(), " already has a ",
                  slots == &parameters_ ? "parameter" : "buffer", " '", name, "'");
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  EMBER_CHECK(m != nullptr, "[register_module] module '", name, "' is null");
  for (auto& [n, c] : children_)
    EMBER_CHECK(n != name, "[register_module] ", this->name(), " already has a submodule '", name,
                "'");
  children_.emplace_back(name, std::move(m));
}

Tensor* Module::parameter_slot(const std::string& name) {
  for (Slot& s : parameters_)
    if (s.name == name) return s.tensor.get();
  return nullptr;
}

Tensor* Module::buffer_slot(const std::string& name) {
  for (Slot& s : buffers_)
    if (s.name == name) return s.tensor.get();
  return nullptr;
}

std::vector<std::string> Module::registered_names(bool parameters) const {
  std::vector<std::string> out;
  for (const Slot& s : parameters ? parameters_ : buffers_) out.push_back(s.name);
  return out;
}

std::shared_ptr<Module> Module::named_child(const std::string& name) const {
  for (auto& [n, c] : children_)
    if (n == name) return c;
  return nullptr;
}

bool Module::remove_module(const std::string& name) {
  auto it = std::find_if(children_.begin(), children_.end(),
                         [&](const auto& child) { return child.first == name; });
  if (it == children_.end()) return false;
  children_.erase(it);
  return true;
}

Tensor Module::stand_in(const Tensor& t) {
  // The caller (clone, replicate) replaces every defined tensor.
  return t.defined() ? uninitialized(t.sizes()) : Tensor();
}

void Module::clone_registered_into(Module& copy) const {
  EMBER_ASSERT(copy.parameters_.empty() && copy.buffers_.empty() && copy.children_.empty(),
               "clone_registered_into expects a module with nothing registered");
  for (const Slot& s : parameters_)
    copy.register_parameter(s.name, stand_in(*s.tensor), s.tensor->requires_grad());
  for (const Slot& s : buffers_) copy.register_buffer(s.name, stand_in(*s.tensor), s.persistent);
  for (auto& [n, c] : children_) copy.add_child(n, c->clone_structure());
}

template <typename Self, typename Fn>
void Module::walk(Self& m, const std::string& prefix, bool recurse, const Fn& fn) {
  fn(prefix, m);
  if (!recurse) return;
  for (auto& [n, c] : m.children_) walk<Self>(*c, prefix + n + ".", true, fn);
}

std::vector<std::pair<std::string, Tensor*>> Module::named_slots(Slots which, bool recurse) const {
  // The Tensor objects are owned through unique_ptr, so a const module still hands out slots.
  std::vector<std::pair<std::string, Tensor*>> out;
  walk(*this, "", recurse, [&](const std::string& prefix, const Module& m) {
    if (which != Slots::Buffers)
      for (const Slot& s : m.parameters_)
        if (s.tensor->defined()) out.emplace_back(prefix + s.name, s.tensor.get());
    if (which != Slots::Parameters)
      for (const Slot& s : m.buffers_)
        if (s.tensor->defined() && (s.persistent || which == Slots::Buffers))
          out.emplace_back(prefix + s.name, s.tensor.get());
  });
  return out;
}

NamedTensors Module::unique_named_tensors(bool params, bool recurse) const {
  // A tensor shared by two modules (a module used twice, tied weights) is listed once, under its
  // first name, so that an optimizer steps it once.
  NamedTensors out;
  std::set<const TensorImpl*> seen;
  for (auto& [name, t] : named_slots(params ? Slots::Parameters : Slots::Buffers, recurse))
    if (seen.insert(t->unsafe_impl()).second) out.emplace_back(name, *t);
  return out;
}

std::vector<Tensor*> Module::slots(bool params, bool recurse) const {
  std::vector<Tensor*> out;
  for (auto& [name, t] : named_slots(params ? Slots::Parameters : Slots::Buffers, recurse))
    out.push_back(t);
  return out;
}

NamedTensors Module::named_parameters(bool recurse) const {
  return unique_named_tensors(true, recurse);
}
std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}
NamedTensors Module::named_buffers(bool recurse) const {
  return unique_named_tensors(false, recurse);
}
std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}
std::vector<Tensor*> Module::parameter_slots(bool recurse) { return slots(true, recurse); }
std::vector<Tensor*> Module::buffer_slots(bool recurse) { return slots(false, recurse); }

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}
std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [n, c] : children_) out.push_back(c);
  return out;
}

std::shared_ptr<Module> Module::replace_module(const std::string& name,
                                               std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "[replace_module] the new module '", name, "' is null");
  for (auto& [n, c] : children_)
    if (n == name) {
      std::shared_ptr<Module> old = std::move(c);
      c = std::move(module);
      return old;
    }
  EMBER_FAIL("[replace_module] ", this->name(), " has no submodule '", name, "'");
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  EMBER_CHECK(!weak_from_this().expired(),
              "[named_modules] the module must be owned by a std::shared_ptr (use nn::make)");
  // A module reachable twice is listed once, under its first name.
  std::set<const Module*> seen;
  walk(*this, "", true, [&](const std::string& prefix, Module& m) {
    if (!seen.insert(&m).second) return;
    out.emplace_back(prefix.empty() ? prefix : prefix.substr(0, prefix.size() - 1),
                     m.shared_from_this());
  });
  return out;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& [n, c] : children_) c->apply(fn);
  fn(*this);
  return *this;
}

Module& Module::to(Device device, DType dtype, bool non_blocking) {
  return convert(device, dtype, non_blocking);
}
Module& Module::to(Device device, bool non_blocking) {
  return convert(device, std::nullopt, non_blocking);
}
Module& Module::to(DType dtype) { return convert(std::nullopt, dtype, false); }

Module& Module::convert(std::optional<Device> device, std::optional<DType> dtype,
                        bool non_blocking) {
  NoGradGuard no_grad;
  auto move = [&](Tensor& t) {
    Device d = device.value_or(t.device());
    DType type = dtype && t.is_floating_point() ? *dtype : t.dtype();
    t.set_data(t.to(d, type, non_blocking));
    if (t.grad().defined()) t.mutable_grad() = t.grad().to(d, type, non_blocking);
  };
  for (Tensor* t : parameter_slots()) move(*t);
  for (Tensor* t : buffer_slots()) move(*t);
  return *this;
}

Module& Module::share_memory() {
  for (Tensor* t : parameter_slots()) {
    if (!t->defined()) continue;
    t->share_memory_();
    if (t->grad().defined()) t->mutable_grad().share_memory_();
  }
  for (Tensor* t : buffer_slots())
    if (t->defined()) t->share_memory_();
  return *this;
}

Module& Module::train(bool on) {
  walk(*this, "", true, [&](const std::string&, Module& m) { m.training_ = on; });
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor* t : parameter_slots()) {
    if (!t->grad().defined()) continue;
    if (set_to_none) {
      t->mutable_grad() = Tensor();
    } else {
      NoGradGuard no_grad;
      t->mutable_grad().zero_();
    }
  }
}

NamedTensors Module::state_dict() const {
  // PyTorch's order: each module's parameters, then its buffers, then its children.
  NamedTensors out;
  for (auto& [name, t] : named_slots(Slots::StateDict, true)) out.emplace_back(name, t->detach());
  return out;
}

void Module::load_state_dict(const NamedTensors& state, bool strict) {
  std::map<std::string, Tensor*> mine;
  for (auto& [name, t] : named_slots(Slots::StateDict, true)) mine[name] = t;
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> seen;
  for (auto& [name, t] : state) {
    seen.insert(name);
    auto it = mine.find(name);
    if (it == mine.end()) {
      unexpected.push_back(name);
    } else if (!t.defined()) {
      mismatched.push_back(name + ": the value is an undefined tensor");
    } else if (it->second->sizes() != t.sizes()) {
      mismatched.push_back(name + ": copying a param with shape " + to_string(t.sizes()) +
                           ", the shape in the current model is " + to_string(it->second->sizes()));
    }
  }
  for (auto& [name, slot] : mine)
    if (!seen.count(name)) missing.push_back(name);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "\"" : ", \"") + x + "\"";
    return s;
  };
  std::ostringstream err;
  if (!mismatched.empty()) err << " size mismatch for " << join(mismatched) << ".";
  if (strict && !missing.empty()) err << " Missing key(s) in state_dict: " << join(missing) << ".";
  if (strict && !unexpected.empty())
    err << " Unexpected key(s) in state_dict: " << join(unexpected) << ".";
  EMBER_CHECK(err.str().empty(), "[load_state_dict] error(s) in loading state_dict for ", name(),
              ":", err.str());
  NoGradGuard no_grad;
  for (auto& [name, t] : state) {
    auto it = mine.find(name);
    if (it != mine.end()) it->second->copy_(t);
  }
}

std::shared_ptr<Module> Module::constructed() const {
  bool saved = t_skip_init;
  t_skip_init = true;
  ScopeGuard restore([&] { t_skip_init = saved; });
  return clone_impl();
}

std::shared_ptr<Module> Module::clone_structure() const {
  std::shared_ptr<Module> copy = constructed();
  copy->adopt_replaced_children(*this);
  copy->adopt_added_slots(*this);
  copy->train(training_);
  return copy;
}

template <typename Fn>
void Module::for_each_replaced(Module& built, const Module& original, const std::string& prefix,
                               const Fn& fn) {
  for (auto& [name, child] : original.children_) {
    std::shared_ptr<Module> mine = built.named_child(name);
    // The same type and configuration (extra_repr: Linear(512, 3) in place of Linear(512, 10)
    // is a replacement); its own children are compared in turn.
    if (mine != nullptr && typeid(*mine) == typeid(*child) &&
        mine->extra_repr() == child->extra_repr())
      for_each_replaced(*mine, *child, prefix + name + ".", fn);
    else
      fn(built, prefix + name, name, child);
  }
}

void Module::adopt_replaced_children(const Module& original) {
  // clone_impl() rebuilds the children a constructor makes; a child replaced since
  // (replace_module) or added takes a copy of the original's structure.
  for_each_replaced(*this, original, "",
                    [](Module& owner, const std::string&, const std::string& name,
                       const std::shared_ptr<Module>& child) {
                      std::shared_ptr<Module> copy = child->clone_structure();
                      if (owner.named_child(name) != nullptr)
                        owner.replace_module(name, std::move(copy));
                      else
                        owner.add_child(name, std::move(copy));
                    });
}

void Module::adopt_added_slots(const Module& original) {
  // A parameter or buffer registered after construction (an extra buffer on a Linear) is not
  // made by clone_impl(); nor is a buffer's persistence changed since.
  for (const Slot& s : original.parameters_)
    if (parameter_slot(s.name) == nullptr)
      register_parameter(s.name, stand_in(*s.tensor), s.tensor->requires_grad());
  for (const Slot& s : original.buffers_) {
    if (buffer_slot(s.name) == nullptr)
      register_buffer(s.name, stand_in(*s.tensor), s.persistent);
    else
      set_persistent(s.name, s.persistent);
  }
  for (auto& [name, child] : original.children_)
    if (std::shared_ptr<Module> mine = named_child(name)) mine->adopt_added_slots(*child);
}

std::vector<std::string> Module::replaced_modules() const {
  std::shared_ptr<Module> built = constructed();
  std::vector<std::string> out;
  for_each_replaced(*built, *this, "",
                    [&](Module&, const std::string& path, const std::string&,
                        const std::shared_ptr<Module>&) { out.push_back(path); });
  return out;
}

std::shared_ptr<Module> Module::clone() const {
  std::shared_ptr<Module> copy = clone_structure();
  auto* self = const_cast<Module*>(this);
  std::vector<Tensor*> src = self->parameter_slots(), dst = copy->parameter_slots();
  std::vector<Tensor*> bsrc = self->buffer_slots(), bdst = copy->buffer_slots();
  EMBER_ASSERT(src.size() == dst.size() && bsrc.size() == bdst.size(), name(),
               "::clone_impl made a module with different tensors");
  NoGradGuard no_grad;
  // A tensor in two slots (tied weights) is copied once, so the copy's slots stay tied.
  std::map<const TensorImpl*, Tensor> copies;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!src[i]->defined()) {  // a None parameter stays None
      *dst[i] = Tensor();
      continue;
    }
    auto [it, fresh] = copies.try_emplace(src[i]->unsafe_impl());
    if (fresh) {
      it->second = src[i]->detach().clone();
      if (src[i]->requires_grad()) it->second.requires_grad_(true);
    }
    *dst[i] = it->second;
  }
  for (size_t i = 0; i < bsrc.size(); ++i)
    *bdst[i] = bsrc[i]->defined() ? bsrc[i]->detach().clone() : Tensor();
  return copy;
}

std::string Module::repr(int indent) const {
  std::ostringstream os;
  os << name() << "(";
  std::string extra = extra_repr();
  if (children_.empty()) return os.str() + extra + ")";
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  os << extra << "\n";
  for (auto& [n, c] : children_) os << pad << "(" << n << "): " << c->repr(indent + 2) << "\n";
  os << std::string(static_cast<size_t>(indent), ' ') << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.repr(); }

}  // namespace ember::nn
