#include "ember/core/autograd_meta.h"

#include "ember/core/grad_mode.h"

namespace ember {

std::atomic<uint64_t> Node::next_sequence_nr_{0};

Node::Node() : sequence_nr(next_sequence_nr_.fetch_add(1, std::memory_order_relaxed)) {}

namespace {
// A plain pointer, constant-initialised: registering it during another file's static
// initialisation is safe whatever the order.
std::atomic<GradAccumulatorFactory> grad_accumulator_factory{nullptr};
}  // namespace

void set_grad_accumulator_factory(GradAccumulatorFactory factory) {
  grad_accumulator_factory.store(factory, std::memory_order_release);
}

AutogradMeta& autograd_meta(const Tensor& t) {
  EMBER_CHECK(t.defined(), "[autograd] undefined tensor");
  TensorImpl* impl = t.unsafe_impl();
  if (!impl->autograd) impl->autograd = std::make_unique<AutogradMeta>();
  return *impl->autograd;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* meta = t.unsafe_impl()->autograd.get();
  if (!meta) return {};
  if (meta->grad_fn) return {meta->grad_fn, meta->output_nr};
  if (!meta->requires_grad) return {};
  std::shared_ptr<Node> acc = meta->grad_accumulator.lock();
  if (!acc) {
    GradAccumulatorFactory make = grad_accumulator_factory.load(std::memory_order_acquire);
    EMBER_ASSERT(make != nullptr,
                 "[autograd] no gradient accumulator is registered: autograd/accumulate_grad.cpp "
                 "was not linked in (ember's link option -u ember_grad_accumulator_registered "
                 "keeps it)");
    acc = make(t);
    meta->grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& meta = autograd_meta(t);
  meta.grad_fn = node;
  meta.output_nr = output_nr;
}

bool Tensor::requires_grad() const {
  if (!impl_) return false;  // an undefined tensor (a None parameter) needs no gradient
  const AutogradMeta* meta = impl_->autograd.get();
  return meta && (meta->requires_grad || meta->grad_fn);
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  if (!requires_grad && !impl_->autograd) return *this;
  AutogradMeta& meta = autograd_meta(*this);
  EMBER_CHECK(!meta.grad_fn,
              "[requires_grad_] you can only change requires_grad of leaf tensors; "
              "use detach() to get a leaf from a tensor made by ",
              meta.grad_fn->name());
  EMBER_CHECK(!requires_grad || is_floating_point() || is_complex(),
              "[requires_grad_] only Tensors of floating point and complex dtype can require "
              "gradients, got ",
              dtype());
  meta.requires_grad = requires_grad;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const AutogradMeta* meta = impl_->autograd.get();
  return meta ? meta->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return autograd_meta(*this).grad; }

void Tensor::set_grad(const Tensor& grad) const {
  if (grad.defined()) {
    EMBER_CHECK(grad.sizes() == sizes(), "[set_grad] assigned grad has shape ", grad.sizes(),
                ", expected ", sizes());
    EMBER_CHECK(grad.device() == device(), "[set_grad] assigned grad is on ", grad.device(),
                ", the tensor on ", device());
  }
  autograd_meta(*this).grad = grad;
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<Node> none;
  const AutogradMeta* meta = impl_->autograd.get();
  return meta ? meta->grad_fn : none;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(),
              "[retain_grad] can't retain_grad on a tensor that has requires_grad=False");
  if (is_leaf()) return;  // leaves keep their gradient anyway
  AutogradMeta& meta = autograd_meta(*this);
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  // The gradient flowing into grad_fn's output is this tensor's; a hook keeps a copy of it.
  std::weak_ptr<TensorImpl> weak = impl_;
  uint32_t nr = meta.output_nr;
  meta.grad_fn->pre_hooks.add([weak, nr](std::vector<Tensor>& grads) {
    std::shared_ptr<TensorImpl> impl = weak.lock();
    if (!impl || nr >= grads.size() || !grads[nr].defined() || !impl->autograd) return;
    Tensor& g = impl->autograd->grad;
    g = g.defined() ? g.add(grads[nr]) : grads[nr].clone();
  });
}

bool Tensor::retains_grad() const {
  const AutogradMeta* meta = impl_->autograd.get();
  return meta && meta->retains_grad;
}

void Tensor::set_data(const Tensor& data) const {
  EMBER_CHECK(data.defined(), "[set_data] undefined tensor");
  TensorImpl& dst = *impl_;
  const TensorImpl& src = *data.impl_;
  if (dst.autograd && dst.autograd->requires_grad)
    EMBER_CHECK(ember::is_floating_point(src.dtype) || ember::is_complex(src.dtype),
                "[set_data] a tensor that requires grad needs floating point data, got ",
                src.dtype);
  dst.storage = src.storage;
  dst.sizes = src.sizes;
  dst.strides = src.strides;
  dst.offset = src.offset;
  dst.dtype = src.dtype;
  dst.device = src.device;
  dst.refresh();
  // A new gradient accumulator is made on demand: the old one recorded the old dtype and shape.
  if (dst.autograd) dst.autograd->grad_accumulator.reset();
}

Tensor Tensor::_base() const { return impl_->view_base ? Tensor(impl_->view_base) : Tensor(); }

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>(impl_->storage, impl_->sizes, impl_->strides,
                                           impl_->offset, impl_->dtype, impl_->device);
  return Tensor(std::move(impl));
}

Tensor& Tensor::detach_() {
  if (impl_->autograd) {
    impl_->autograd->grad_fn.reset();
    impl_->autograd->requires_grad = false;
  }
  return *this;
}

RemovableHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(),
              "[register_hook] cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& meta = autograd_meta(*this);
  if (!meta.grad_fn)  // a leaf: its accumulator runs the hooks before accumulating
    return meta.hooks.add(std::move(hook));
  uint32_t nr = meta.output_nr;
  return meta.grad_fn->pre_hooks.add([nr, hook = std::move(hook)](std::vector<Tensor>& grads) {
    if (nr < grads.size() && grads[nr].defined()) {
      Tensor replaced = hook(grads[nr]);
      if (replaced.defined()) grads[nr] = replaced;
    }
  });
}

RemovableHandle Tensor::register_post_accumulate_grad_hook(
    std::function<void(const Tensor&)> hook) const {
  EMBER_CHECK(is_leaf() && requires_grad(),
              "[register_post_accumulate_grad_hook] expected a leaf tensor that requires grad");
  return autograd_meta(*this).post_accumulate_hooks.add(std::move(hook));
}

}  // namespace ember
