// nn::Module: parameters, buffers and child modules by name, moved between devices and dtypes in
// place, switched between training and evaluation, saved and loaded as a state dict.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/hook_list.h"
#include "ember/core/tensor.h"

namespace ember::nn {

/// Name -> tensor, in registration order (PyTorch's state_dict order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The module's computation on one input; modules with other signatures define their own.
  virtual Tensor forward(const Tensor& x);
  /// Calls the module: its forward pre-hooks, forward, its forward hooks (Note [Module calls]).
  /// Modules call their children this way, so anything hooked on a child runs wherever it sits.
  Tensor operator()(const Tensor& x);

  /// PyTorch's register_forward_pre_hook: hook(module, inputs) before forward; it may replace
  /// the inputs. register_forward_hook: hook(module, inputs, outputs) after; it may replace the
  /// outputs. The handle's remove() takes the hook out.
  using ForwardPreHook = std::function<void(Module&, std::vector<Tensor>& inputs)>;
  using ForwardHook = std::function<void(Module&, const std::vector<Tensor>& inputs,
                                         std::vector<Tensor>& outputs)>;
  RemovableHandle register_forward_pre_hook(ForwardPreHook hook);
  RemovableHandle register_forward_hook(ForwardHook hook);
  /// A forward over several tensors run between the hooks (GPT's (idx, targets) -> (logits,
  /// loss)): `body` maps the inputs, after the pre-hooks, to the outputs the hooks then see.
  std::vector<Tensor> call(std::vector<Tensor> inputs,
                           const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body);

  /// "Linear", "Conv2d", ... and the arguments shown in its repr.
  virtual std::string name() const = 0;
  virtual std::string extra_repr() const { return ""; }

  /// A deep copy: new parameters and buffers with the same values (for replicas).
  std::shared_ptr<Module> clone() const;

  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  std::vector<std::shared_ptr<Module>> children() const;
  /// Puts `module` in the place of the child `name` (same position in the state dict) and returns
  /// the child it replaced (convert_sync_batchnorm). Modules that keep typed handles to their
  /// children (Sequential, the models) override it to update them, then call this.
  virtual std::shared_ptr<Module> replace_module(const std::string& name,
                                                 std::shared_ptr<Module> module);
  /// This module and all below it, depth first, with dotted names ("" for this one).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  /// Calls fn on every module below this one, then on this one (PyTorch's order).
  Module& apply(const std::function<void(Module&)>& fn);

  /// Moves and converts parameters and buffers in place: every handle to them sees the change.
  /// Only floating tensors change dtype (integer buffers such as num_batches_tracked keep theirs).
  Module& to(Device device, bool non_blocking = false);
  Module& to(DType dtype);
  /// Moves parameters and buffers (and gradients that already exist) into shared memory in place
  /// (torch.nn.Module.share_memory): processes forked afterwards, or sent them through a
  /// multiprocessing::Queue, update the same weights (Hogwild).
  Module& share_memory();
  Module& to(Device device, DType dtype, bool non_blocking = false);

  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  /// Clears the gradients (set_to_none drops them, as PyTorch 2 does by default).
  void zero_grad(bool set_to_none = true);

  /// Parameters and buffers with dotted names ("features.0.weight").
  NamedTensors state_dict() const;
  /// Copies values in; with `strict`, missing, unexpected and mis-shaped keys are one clear error
  /// listing them all, and nothing is changed.
  void load_state_dict(const NamedTensors& state, bool strict = true);

  /// Registers a parameter (a leaf that requires grad) or a buffer. The returned reference stays
  /// valid for the module's life: layers keep it as their `weight` member, so replacing the slot
  /// (replication for DataParallel) is seen by the layer. A buffer that is not `persistent` is
  /// left out of the state dict (a cache derived from other state), as in PyTorch; it still moves,
  /// replicates and is broadcast with the module.
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, Tensor t, bool persistent = true);
  /// Whether this module's own buffer `name` is in the state dict; changing it keeps the tensor.
  bool is_persistent(const std::string& buffer) const;
  void set_persistent(const std::string& buffer, bool persistent);

  /// Every parameter or buffer slot in registration order, a module used in two places giving
  /// its slots twice: the order clone_structure()'s copy has, which replicas fill with tensors
  /// that stay connected to the original's parameters in the autograd graph.
  std::vector<Tensor*> parameter_slots(bool recurse = true);
  std::vector<Tensor*> buffer_slots(bool recurse = true);
  /// A copy of the structure whose slots the caller fills (clone() copies, DataParallel
  /// replicates).
  std::shared_ptr<Module> clone_structure() const;
  /// The dotted names of the modules below this one that its constructor did not put there
  /// (replace_module, convert_sync_batchnorm, an added child), outermost only: what rebuilding
  /// it from its constructor's arguments in another process must bring along.
  std::vector<std::string> replaced_modules() const;
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }

  /// The parameter or buffer slot registered on this module itself under `name` (null if none;
  /// the tensor in it may be undefined, as a bias=false layer's bias).
  Tensor* parameter_slot(const std::string& name);
  Tensor* buffer_slot(const std::string& name);
  /// The names of this module's own parameter (or buffer) slots in registration order, slots
  /// holding an undefined tensor included.
  std::vector<std::string> registered_names(bool parameters) const;
  /// The child registered as `name` (null if none).
  std::shared_ptr<Module> named_child(const std::string& name) const;
  /// Removes the child `name` (del module.name); false if there is none.
  bool remove_module(const std::string& name);

  /// The repr PyTorch prints: Sequential(\n  (0): Linear(in_features=...)\n ...).
  std::string repr(int indent = 0) const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  /// A new module of the same type and configuration (children included), its tensors allocated
  /// but not initialised: clone_structure() runs it with initialisation switched off.
  virtual std::shared_ptr<Module> clone_impl() const = 0;
  /// clone_impl for a module whose structure is only known at run time (a Python subclass): gives
  /// `copy`, a new module of this type with nothing registered, this module's children (their
  /// clone_structure()) and a stand-in of each parameter and buffer, under the same names.
  void clone_registered_into(Module& copy) const;
  /// Whether a layer's constructor should initialise its parameters (false while cloning).
  static bool should_initialize();
  /// A layer's parameter before initialisation: empty(sizes), or while clone_structure() runs a
  /// stand-in of that shape over one element (strides 0), since the caller replaces every tensor
  /// of the copy: replicating a model for DataParallel allocates nothing it throws away.
  static Tensor uninitialized(const Shape& sizes);

 private:
  struct Slot {
    std::string name;
    std::unique_ptr<Tensor> tensor;  // a stable address for the layer's reference
    bool persistent = true;          // in the state dict (buffers only)
  };
  enum class Slots { Parameters, Buffers, StateDict };  // StateDict: parameters, persistent buffers
  /// The one walk over the module tree: fn(prefix, module) on `m` and, with `recurse`, every
  /// module below it, depth first in registration order, a module before its children. prefix is
  /// "" for `m` and "features.0." below it; a module used in two places is visited under each name.
  /// Self is Module or const Module.
  template <typename Self, typename Fn>
  static void walk(Self& m, const std::string& prefix, bool recurse, const Fn& fn);
  /// The defined slots of a kind in walk order (per module, parameters first), with dotted
  /// names; nothing is deduplicated.
  std::vector<std::pair<std::string, Tensor*>> named_slots(Slots which, bool recurse) const;
  NamedTensors unique_named_tensors(bool params, bool recurse) const;
  std::vector<Tensor*> slots(bool params, bool recurse) const;
  void check_new_name(const char* op, const std::string& name) const;
  /// clone_impl() with initialisation switched off: the structure the constructor makes.
  std::shared_ptr<Module> constructed() const;
  /// fn(owner in `built`, dotted path, name, original's child) for each child of `original`, at
  /// any depth, that `built` (what original's constructor makes) lacks or holds with another type
  /// or configuration.
  template <typename Fn>
  static void for_each_replaced(Module& built, const Module& original, const std::string& prefix,
                                const Fn& fn);
  void adopt_replaced_children(const Module& original);
  void adopt_added_slots(const Module& original);
  /// What a copy holds in the place of `t` until the caller fills it (see uninitialized).
  static Tensor stand_in(const Tensor& t);
  Module& convert(std::optional<Device> device, std::optional<DType> dtype, bool non_blocking);
  std::vector<Slot> parameters_;
  std::vector<Slot> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  HookList<ForwardPreHook> forward_pre_hooks_;
  HookList<ForwardHook> forward_hooks_;
};

/// Convenience for modules: std::make_shared<M>(args...).
template <typename M, typename... Args>
std::shared_ptr<M> make(Args&&... args) {
  return std::make_shared<M>(std::forward<Args>(args)...);
}

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace ember::nn
