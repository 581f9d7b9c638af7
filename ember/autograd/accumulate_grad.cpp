// The node at every leaf that requires grad: adds the incoming gradient into leaf.grad(), after
// the leaf's hooks and before its post-accumulate hooks (where DDP starts its all-reduce).
#include "ember/core/autograd_meta.h"
#include "ember/core/device_backend.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/elementwise.h"

namespace ember {
namespace {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) {
    device = leaf_.device();
    // Note [Backward stream] (autograd/engine.cpp): the engine runs this node, so the leaf's
    // hooks and its accumulation, on the stream current when the leaf entered the graph.
    if (device.is_cuda()) stream = device_backend(kCUDA).current_stream(device.index());
    input_meta.push_back({leaf_.dtype(), leaf_.sizes()});
  }
  std::string name() const override { return "AccumulateGrad"; }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    Tensor g = std::move(grads[0]);
    if (!g.defined()) return {};
    AutogradMeta& meta = autograd_meta(leaf_);
    meta.hooks.for_each([&g](auto& hook) {
      Tensor r = hook(g);
      if (r.defined()) g = r;
    });
    Tensor& grad = meta.grad;
    if (!grad.defined()) {
      // Keep the gradient itself only if nothing else can see it and it owns one element per
      // value: a later in-place accumulation must change neither another tensor nor, through an
      // expanded view (sum's gradient), several elements at once. Under create_graph the clone
      // keeps the graph.
      bool exclusive = g.impl().use_count() == 1 && g.storage().use_count() == 1;
      if (GradMode::is_enabled())
        grad = g.clone();
      else
        grad = exclusive && g.is_contiguous() ? g.detach() : g.detach().clone();
    } else if (GradMode::is_enabled()) {
      grad = grad + g;  // create_graph: keep the graph of the accumulation
    } else {
      grad.add_(g);
    }
    meta.post_accumulate_hooks.for_each([this](auto& hook) { hook(leaf_); });
    return {};
  }

 private:
  Tensor leaf_;
};

std::shared_ptr<Node> make_grad_accumulator(const Tensor& leaf) {
  return std::make_shared<AccumulateGrad>(leaf);
}

}  // namespace

// Core calls the factory; nothing names this file, so in the static library the linker would
// leave it out: ember's CMake target gives every program that links it
// -u ember_grad_accumulator_registered.
extern "C" const bool ember_grad_accumulator_registered = [] {
  set_grad_accumulator_factory(&make_grad_accumulator);
  return true;
}();

}  // namespace ember
