// How an op records itself in the autograd graph: a node holding the backward formula as a lambda
// beside the forward code, the saved tensors it needs, and the edges to its inputs' gradients.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/autograd_meta.h"
#include "ember/core/grad_mode.h"
#include "ember/core/tensor.h"

namespace ember {

/// A view whose storage was modified since its history was made takes a fresh one from its base,
/// so that ops see the change (and a view of a tensor that came to require grad requires it too).
void refresh_view_history(const Tensor& view);
/// Gives `view` the history "a view of `base`'s current value" (AsStridedBackward0); `base` must
/// be contiguous and hold the view within its elements.
void record_view_of(const Tensor& view, const Tensor& base);

/// Whether `t` takes part in an op's graph now.
inline bool needs_grad(const Tensor& t) {
  if (!t.defined()) return false;
  if (t.unsafe_impl()->view_base) refresh_view_history(t);
  return t.requires_grad();
}

/// Whether an op on these tensors must record a node: grad mode is on and one requires grad.
inline bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs)
    if (needs_grad(*t)) return true;
  return false;
}
inline bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (needs_grad(t)) return true;
  return false;
}

namespace detail {
/// SavedTensors made on this thread since the last record(): a node whose backward saved none
/// keeps working after backward (PyTorch frees, and then refuses, only nodes that saved tensors).
inline thread_local int t_saved_since_record = 0;
}  // namespace detail

/// A tensor kept for backward. Inputs keep their graph (double backward works through them);
/// outputs are kept detached, which avoids an ownership cycle through their own node. Using one
/// that was modified in place since is an error.
namespace detail {
/// An op's output saved for its backward: kept without its history (the node would hold itself),
/// and told its node and output number when record() attaches the node, so that under
/// create_graph get() can give it back with its history (PyTorch's SavedVariable does the same).
struct SavedOutput {
  Tensor data;
  const TensorImpl* original = nullptr;
  std::weak_ptr<Node> node;
  uint32_t output_nr = 0;
};
/// Saved outputs made on this thread whose node record() has not attached yet.
inline thread_local std::vector<std::shared_ptr<SavedOutput>> t_pending_outputs;
}  // namespace detail

class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t, bool is_output = false)
      : version_(t.defined() ? t._version() : 0) {
    if (is_output && t.defined()) {
      output_ = std::make_shared<detail::SavedOutput>();
      output_->data = t.detach();
      output_->original = t.unsafe_impl();
      detail::t_pending_outputs.push_back(output_);
    } else {
      tensor_ = t;
    }
    ++detail::t_saved_since_record;
  }
  /// The saved tensor. A saved output comes back with its history while gradients are recorded
  /// (a backward under create_graph), so that the backward of the backward reaches it.
  Tensor get() const;

 private:
  Tensor tensor_;
  std::shared_ptr<detail::SavedOutput> output_;
  uint32_t version_ = 0;
};

/// A node whose backward is a lambda: (const Tensor& grad) or (const Tensor& grad, const Node&)
/// for single-output ops, (std::vector<Tensor>& grads, const Node&) for multi-output ones.
template <typename F>
class FunctionNode final : public Node {
 public:
  /// `saves`: whether `f` holds SavedTensors (which backward frees unless retain_graph).
  FunctionNode(const char* name, F f, bool saves) : name_(name), f_(std::move(f)), saves_(saves) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (!f_) throw_released();
    if constexpr (std::is_invocable_v<F&, std::vector<Tensor>&, const Node&>) {
      return (*f_)(grads, *this);
    } else if constexpr (std::is_invocable_v<F&, const Tensor&, const Node&>) {
      return (*f_)(grads[0], *this);
    } else {
      return (*f_)(grads[0]);
    }
  }
  std::string name() const override { return name_; }
  void release_variables() override {
    if (saves_) f_.reset();
  }

 private:
  [[noreturn]] void throw_released() const {
    EMBER_FAIL(
        "[backward] trying to backward through the graph a second time (or to access saved tensors after they have been freed) in ",
        name_, ": specify retain_graph=true on the first backward call");
  }
  const char* name_;
  std::optional<F> f_;
  bool saves_;
};

namespace detail {
/// Whether the backward function just made saved tensors; starts the count afresh.
inline bool take_saved() {
  bool saved = t_saved_since_record > 0;
  t_saved_since_record = 0;
  return saved;
}
}  // namespace detail

namespace detail {
void attach_node(const std::shared_ptr<Node>& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<const Tensor*>& outputs);
}

/// Records `outputs` as made from `inputs` by an op whose backward is `backward`.
template <typename F>
std::shared_ptr<Node> record(const char* name, std::initializer_list<const Tensor*> outputs,
                             std::initializer_list<const Tensor*> inputs, F backward) {
  auto node = std::make_shared<FunctionNode<F>>(name, std::move(backward), detail::take_saved());
  detail::attach_node(node, std::vector<const Tensor*>(inputs),
                      std::vector<const Tensor*>(outputs));
  return node;
}

/// As record, for ops with a variable number of inputs or outputs (cat, split).
template <typename F>
std::shared_ptr<Node> record_list(const char* name, const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& inputs, F backward) {
  auto node = std::make_shared<FunctionNode<F>>(name, std::move(backward), detail::take_saved());
  std::vector<const Tensor*> in, out;
  for (const Tensor& t : inputs) in.push_back(&t);
  for (const Tensor& t : outputs) out.push_back(&t);
  detail::attach_node(node, in, out);
  return node;
}

/// The edge `t`'s gradient flows into when an op uses it now (after refresh_view_history).
inline Edge history_edge(const Tensor& t) {
  if (t.unsafe_impl()->view_base) refresh_view_history(t);
  return gradient_edge(t);
}

/// For in-place ops: checks that `self` may be modified under autograd (not a leaf that requires
/// grad, nor a view of one). The op then records a node whose first input is self's previous
/// history, and calls rebase_history.
void check_inplace(const Tensor& self, const char* op);

/// After an in-place op gave `self` its history: when `self` is a view, its base takes the history
/// instead (the base with the view's region replaced by the op's result), and the view becomes a
/// view of the new base. PyTorch's CopySlices.
void rebase_history(const Tensor& self);

/// Checks that an in-place op's result (computed out of place) can be written into self: the
/// same shape, and a dtype that casts to self's (PyTorch's errors for x.sqrt_() of ints).
void check_inplace_result(const Tensor& self, const Tensor& result, const char* op);

/// An in-place op under autograd: `compute` makes the result out of place from a clone (backward
/// formulas may then use the old value); it is written back and `self` takes its history.
template <typename F>
Tensor& inplace_with_grad(Tensor& self, const char* op, F compute) {
  check_inplace(self, op);
  Tensor result = compute(self.clone());
  check_inplace_result(self, result, op);
  {
    NoGradGuard no_grad;
    self.copy_(result);
  }
  set_history(self, result.grad_fn(), autograd_meta(result).output_nr);
  rebase_history(self);
  return self;
}

/// An in-place form made from its out-of-place op, for the forms without a kernel of their own:
/// the result is written into self, and under autograd (`grad`: any_requires_grad of the
/// inputs) it goes as inplace_with_grad, so that the tensor the op saved for its backward is
/// never the one it overwrites (leaky_relu(x, inplace=True) saves x).
template <typename F>
Tensor& inplace_from(Tensor& self, const char* op, bool grad, F compute) {
  if (grad) return inplace_with_grad(self, op, compute);
  Tensor result = compute(self);
  check_inplace_result(self, result, op);
  self.copy_(result);
  return self;
}

/// Sums `grad` over the dims that were broadcast to reach it from `shape`.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace ember
