#include "ember/ops/inplace_geometry.h"

#include "ember/core/autograd_meta.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/core/shape.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/views.h"

namespace ember {

Tensor& resize_(Tensor& self, const Shape& sizes) {
  EMBER_OP(resize_, self, sizes);
  EMBER_CHECK(self.defined(), "[resize_] expected a defined tensor");
  EMBER_CHECK(!self.requires_grad(), "cannot resize variables that require grad");
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  TensorImpl& impl = *self.unsafe_impl();
  size_t item = itemsize(impl.dtype);
  size_t needed = static_cast<size_t>(impl.offset + numel_of(sizes)) * item;
  StorageImpl& storage = *impl.storage;
  if (numel_of(sizes) > 0 && needed > storage.nbytes) {
    // A larger allocation on the same device takes the old bytes; the storage object itself is
    // kept, so every view of it (and its version counter) sees the new memory.
    Tensor grown = empty({static_cast<int64_t>((needed + item - 1) / item)},
                         TensorOptions(impl.dtype).with_device(impl.device));
    int64_t old_elements = static_cast<int64_t>(storage.nbytes / item);
    if (old_elements > 0) {
      NoGradGuard no_grad;
      Tensor old_flat = as_strided(self.detach(), {old_elements}, {1}, 0);
      grown.narrow(0, 0, old_elements).copy_(old_flat);
    }
    StorageImpl& fresh = *grown.unsafe_impl()->storage;
    // Memory the device's allocator did not make (shared memory, a NumPy array, a DLPack
    // capsule) cannot be moved: PyTorch's storages there are not resizable either.
    EMBER_CHECK(!storage.data || storage.data.deleter() == fresh.data.deleter(),
                "Trying to resize storage that is not resizable");
    storage.data = std::move(fresh.data);
    storage.nbytes = fresh.nbytes;
  }
  impl.sizes = sizes;
  impl.strides = contiguous_strides(sizes);
  impl.refresh();
  self.bump_version();
  return self;
}

Tensor& resize_as_(Tensor& self, const Tensor& other) { return resize_(self, other.sizes()); }

namespace {
void check_not_grad_leaf(const Tensor& self, const char* op) {
  EMBER_CHECK(!(GradMode::is_enabled() && self.is_leaf() && self.requires_grad()), "[", op,
              "] a leaf Variable that requires grad is being used in an in-place operation.");
}
}  // namespace

Tensor& become_view(Tensor& self, const Tensor& view, const char* op) {
  check_not_grad_leaf(self, op);
  TensorImpl& dst = *self.unsafe_impl();
  const TensorImpl& src = *view.unsafe_impl();
  dst.sizes = src.sizes;
  dst.strides = src.strides;
  dst.offset = src.offset;
  dst.refresh();
  // The view's node takes self's old history as its input, so self's history becomes the
  // view's; a view of a base stays a view of it, now matching the base's current version.
  if (src.autograd && src.autograd->grad_fn) {
    set_history(self, src.autograd->grad_fn, src.autograd->output_nr);
    if (dst.view_base && dst.view_base == src.view_base) dst.view_version = src.view_version;
  }
  return self;
}

Tensor& squeeze_(Tensor& self, std::optional<int64_t> dim) {
  return become_view(self, dim ? self.squeeze(*dim) : self.squeeze(), "squeeze_");
}
Tensor& unsqueeze_(Tensor& self, int64_t dim) {
  return become_view(self, self.unsqueeze(dim), "unsqueeze_");
}
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1) {
  return become_view(self, self.transpose(dim0, dim1), "transpose_");
}
Tensor& t_(Tensor& self) { return become_view(self, self.t(), "t_"); }
Tensor& as_strided_(Tensor& self, const Shape& sizes, const Shape& strides,
                    std::optional<int64_t> offset) {
  return become_view(self, as_strided(self, sizes, strides, offset.value_or(self.storage_offset())),
                     "as_strided_");
}

Tensor& set_(Tensor& self, const Tensor& source) {
  EMBER_OP(set_, self, source);
  check_not_grad_leaf(self, "set_");
  EMBER_CHECK(source.defined(), "[set_] expected a defined source tensor");
  EMBER_CHECK(self.dtype() == source.dtype(), "Could not set tensor of type ", source.dtype(),
              " to a tensor of type ", self.dtype());
  EMBER_CHECK(self.device() == source.device(), "Attempted to call `set_()` on a tensor on ",
              self.device(), " with a source on ", source.device());
  TensorImpl& dst = *self.unsafe_impl();
  const TensorImpl& src = *source.unsafe_impl();
  dst.storage = src.storage;
  dst.sizes = src.sizes;
  dst.strides = src.strides;
  dst.offset = src.offset;
  dst.refresh();
  self.bump_version();
  return self;
}

}  // namespace ember
