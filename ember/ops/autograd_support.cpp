#include "ember/ops/autograd_support.h"

#include <algorithm>

#include "ember/core/device_backend.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/views.h"

namespace ember {

Tensor SavedTensor::get() const {
  const Tensor& t = output_ ? output_->data : tensor_;
  if (t.defined() && t._version() != version_) {
    EMBER_FAIL(
        "[backward] one of the tensors needed for gradient computation has been modified by an inplace operation: ",
        t.toString(), " is at version ", t._version(), "; expected version ", version_,
        " instead");
  }
  if (output_ && GradMode::is_enabled()) {
    if (std::shared_ptr<Node> node = output_->node.lock()) {
      // A fresh alias each time: stored, its history would keep the node alive from inside.
      Tensor alias = output_->data.detach();
      set_history(alias, node, output_->output_nr);
      return alias;
    }
  }
  return t;
}

namespace detail {
void attach_node(const std::shared_ptr<Node>& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<const Tensor*>& outputs) {
  node->next_edges.reserve(inputs.size());
  node->input_meta.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    if (t->defined()) {
      node->next_edges.push_back(history_edge(*t));
      node->input_meta.push_back({t->dtype(), t->sizes()});
    } else {
      node->next_edges.push_back({});
      node->input_meta.push_back({kFloat32, {}});
    }
  }
  node->num_outputs = static_cast<uint32_t>(outputs.size());
  if (!outputs.empty() && outputs[0]->defined()) {
    node->device = outputs[0]->device();
    // Backward runs on the stream the forward op ran on (Note [Backward stream]).
    if (node->device.is_cuda())
      node->stream = device_backend(kCUDA).current_stream(node->device.index());
  }
  // Integer and bool outputs (indices, an int cast) take no history: as in PyTorch, only
  // floating and complex tensors carry gradients.
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i]->defined() &&
        (is_floating_point(outputs[i]->dtype()) || is_complex(outputs[i]->dtype())))
      set_history(*outputs[i], node, static_cast<uint32_t>(i));
  // The outputs the backward saved learn their node (for get() under create_graph).
  for (const std::shared_ptr<SavedOutput>& saved : t_pending_outputs)
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i]->defined() && outputs[i]->unsafe_impl() == saved->original) {
        saved->node = node;
        saved->output_nr = static_cast<uint32_t>(i);
      }
  t_pending_outputs.clear();
}
}  // namespace detail

namespace {

// Whether some two elements of (sizes, strides) share memory: sorted by stride, each dim must step
// past everything the smaller dims span.
bool overlaps(const Shape& sizes, const Shape& strides) {
  std::vector<std::pair<int64_t, int64_t>>
      dims;  // (stride, size) of dims with more than one element
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1) dims.emplace_back(strides[d], sizes[d]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // the largest offset the dims so far reach
  for (auto [stride, size] : dims) {
    if (stride <= span) return true;
    span += stride * (size - 1);
  }
  return false;
}

// Where a view of `base` sits within a contiguous tensor of base's shape: the gradients of the
// base are made contiguous, so its own strides do not matter beyond this check.
struct ViewGeometry {
  Shape sizes, strides, base_sizes;
  int64_t offset;  // from the base's first element
  Tensor in(const Tensor& whole) const { return as_strided(whole, sizes, strides, offset); }
};
ViewGeometry view_geometry(const Tensor& view, const Tensor& base, const char* op) {
  EMBER_CHECK(base.is_contiguous(), "[", op,
              "] autograd through a view needs the viewed tensor to be contiguous; it has shape ",
              base.sizes(), " and strides ", base.strides(),
              " (call .contiguous() before viewing)");
  ViewGeometry geo{view.sizes(), view.strides(), base.sizes(),
                   view.storage_offset() - base.storage_offset()};
  EMBER_CHECK(
      geo.offset >= 0 &&
          storage_bytes(geo.sizes, geo.strides, geo.offset, base.dtype(), op) <= base.nbytes(),
      "[", op,
      "] autograd through a view needs it to lie within the viewed tensor's elements (sizes ",
      geo.sizes, ", strides ", geo.strides, ", offset ", geo.offset, " in a tensor of shape ",
      base.sizes(), ")");
  return geo;
}

}  // namespace

void record_view_of(const Tensor& view, const Tensor& base) {
  ViewGeometry geo = view_geometry(view, base, "view");
  bool overlapping = overlaps(geo.sizes, geo.strides);
  record("AsStridedBackward0", {&view}, {&base}, [geo, overlapping](const Tensor& g) -> TensorList {
    Tensor whole = zeros(geo.base_sizes, g.options());
    if (!overlapping) {
      geo.in(whole).copy_(g);
      return {whole};
    }
    // Several view elements share a base element (expand): their gradients add up.
    int64_t n = whole.numel();
    Tensor where = geo.in(arange(n, TensorOptions(kInt64).with_device(g.device())));
    return {whole.reshape({n})
                .scatter_add(0, where.reshape({-1}), g.reshape({-1}))
                .view(geo.base_sizes)};
  });
}

void refresh_view_history(const Tensor& view) {
  TensorImpl* impl = view.unsafe_impl();
  if (impl->view_version == view._version()) return;
  impl->view_version = view._version();
  Tensor base(impl->view_base);
  if (base.requires_grad() && GradMode::is_enabled()) record_view_of(view, base);
}

void check_inplace_result(const Tensor& self, const Tensor& result, const char* op) {
  EMBER_CHECK(result.sizes() == self.sizes(), "[", op, "] output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", result.sizes());
  EMBER_CHECK(can_cast(result.dtype(), self.dtype()), "[", op, "] result type ", result.dtype(),
              " can't be cast to the desired output type ", self.dtype());
}

void check_inplace(const Tensor& self, const char* op) {
  if (!GradMode::is_enabled()) return;
  EMBER_CHECK(!(self.is_leaf() && self.requires_grad()), "[", op,
              "] a leaf tensor that requires grad is being used in an in-place operation; "
              "wrap it in NoGradGuard or use the out-of-place op");
  if (!self.is_view()) return;
  Tensor base = self._base();
  EMBER_CHECK(
      !(base.is_leaf() && base.requires_grad()), "[", op,
      "] a view of a leaf tensor that requires grad is being used in an in-place operation; "
      "wrap it in NoGradGuard or work on a clone");
  EMBER_CHECK(
      !overlaps(self.sizes(), self.strides()), "[", op,
      "] more than one element of the written-to tensor refers to a single memory location (an expanded view, shape ",
      self.sizes(), " strides ", self.strides(), "); clone it before the in-place op");
}

void rebase_history(const Tensor& self) {
  if (!self.is_view() || !self.grad_fn()) return;
  // self's history is the in-place op's result: current, not to be refreshed from the base.
  self.unsafe_impl()->view_version = self._version();
  Tensor base = self._base();
  ViewGeometry geo = view_geometry(self, base, "in-place on a view");
  // The new base: the old one outside the view's region, the op's result (self's history) inside.
  record("CopySlices", {&base}, {&base, &self},
         [geo](const Tensor& g, const Node& n) -> TensorList {
           Tensor whole = g.contiguous();
           Tensor g_result = n.needs_input_grad(1) ? geo.in(whole).clone() : Tensor();
           Tensor g_base;
           if (n.needs_input_grad(0)) {
             g_base = whole.is_same(g) ? g.clone() : whole;
             geo.in(g_base).zero_();  // the overwritten values get no gradient
           }
           return {g_base, g_result};
         });
  record_view_of(self, base);
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  EMBER_OP(sum_to, grad, shape);
  if (grad.sizes() == shape) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (shape[static_cast<size_t>(d - lead)] == 1 && grad.size(d) != 1))
      dims.push_back(d);
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  if (lead > 0) r = r.reshape(shape);
  return r.sizes() == shape ? r : r.reshape(shape);
}

}  // namespace ember
