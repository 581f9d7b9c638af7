#include "ember/ops/autograd_support.h"

#include "ember/core/device_backend.h"
#include "ember/ops/reduce.h"

namespace ember {

const Tensor& SavedTensor::get() const {
  if (tensor_.defined() && tensor_._version() != version_) {
    EMBER_FAIL(
        "[backward] one of the tensors needed for gradient computation has been modified by "
        "an inplace operation: ",
        tensor_.toString(), " is at version ", tensor_._version(), "; expected version ", version_,
        " instead");
  }
  return tensor_;
}

namespace detail {
void attach_node(const std::shared_ptr<Node>& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<const Tensor*>& outputs) {
  node->next_edges.reserve(inputs.size());
  node->input_meta.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    if (t->defined()) {
      node->next_edges.push_back(gradient_edge(*t));
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
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i]->defined()) set_history(*outputs[i], node, static_cast<uint32_t>(i));
}
}  // namespace detail

void check_inplace(const Tensor& self, const char* op) {
  if (!GradMode::is_enabled()) return;
  EMBER_CHECK(!(self.is_leaf() && self.requires_grad()), "[", op,
              "] a leaf tensor that requires "
              "grad is being used in an in-place operation; wrap it in NoGradGuard or use the "
              "out-of-place op");
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
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
