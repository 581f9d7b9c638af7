#include "ember/ops/resize.h"

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/ops/views.h"

namespace ember {

Tensor& resize_(Tensor& self, const Shape& sizes) {
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

}  // namespace ember
