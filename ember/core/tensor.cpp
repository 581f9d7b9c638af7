#include "ember/core/tensor.h"

#include <cstring>
#include <sstream>

#include "ember/core/autograd_meta.h"
#include "ember/core/device_backend.h"
#include "ember/core/shared_memory.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage_, const Shape& sizes_, const Shape& strides_,
                       int64_t offset_, DType dtype_, Device device_)
    : storage(std::move(storage_)),
      sizes(sizes_),
      strides(strides_),
      offset(offset_),
      dtype(dtype_),
      device(device_) {
  refresh();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::refresh() {
  numel = numel_of(sizes);  // checks every view's shape for negative sizes and overflow
  contiguous = is_contiguous_layout(sizes, strides);
}

int64_t Tensor::size(int64_t dim) const {
  EMBER_CHECK(this->dim() > 0, "[size] dimension specified as ", dim,
              " but the tensor has no dimensions");
  return impl_->sizes[static_cast<size_t>(wrap_dim(dim, this->dim(), "size"))];
}

int64_t Tensor::stride(int64_t dim) const {
  EMBER_CHECK(this->dim() > 0, "[stride] dimension specified as ", dim,
              " but the tensor has no dimensions");
  return impl_->strides[static_cast<size_t>(wrap_dim(dim, this->dim(), "stride"))];
}

int Tensor::get_device() const {
  const Device& d = impl_->device;
  return d.is_cpu() && d.index() == 0 ? -1 : d.index();
}

TensorOptions Tensor::options() const {
  TensorOptions o;
  o.dtype = dtype();
  o.device = device();
  return o;
}

void* Tensor::data_ptr() const {
  char* base = static_cast<char*>(impl_->storage->data.get());
  return base ? base + impl_->offset * static_cast<int64_t>(element_size()) : nullptr;
}

std::string Tensor::toString() const {
  if (!defined()) return "undefined tensor";
  std::ostringstream os;
  os << dtype() << sizes() << " on " << device();
  return os.str();
}

Device resolve_device(Device device) {
  DeviceBackend& backend = device_backend(device.type());
  int count = backend.device_count();
  if (count == 0) {
    std::string reason = backend.unavailable_reason();
    EMBER_FAIL("[device] no ", device.type(), " device is available", reason.empty() ? "" : ": ",
               reason);
  }
  int index =
      device.has_index() ? device.index() : (device.is_cpu() ? 0 : backend.current_device());
  if (index >= count) {
    std::ostringstream devices;
    for (int i = 0; i < count; ++i) devices << (i ? ", " : "") << device.type() << ":" << i;
    EMBER_FAIL("[device] ", device, " does not exist; the ", device.type(), " devices are ",
               devices.str(),
               device.is_cpu() ? " (set EMBER_CPU_DEVICES=N for more virtual CPU devices)" : "");
  }
  return Device(device.type(), index);
}

size_t storage_bytes(const Shape& sizes, const Shape& strides, int64_t offset, DType dtype,
                     const char* op) {
  EMBER_CHECK(offset >= 0, "[", op, "] negative storage offset ", offset);
  int64_t extent = 1;  // elements spanned by the layout
  bool ok = true;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(sizes[i] >= 0 && strides[i] >= 0, "[", op,
                "] sizes and strides must be non-negative, got sizes ", sizes, " and strides ",
                strides);
    if (sizes[i] == 0) return 0;
    int64_t span;
    ok = ok && !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
         !__builtin_add_overflow(extent, span, &extent);
  }
  int64_t bytes;
  ok = ok && !__builtin_add_overflow(extent, offset, &extent) &&
       !__builtin_mul_overflow(extent, static_cast<int64_t>(itemsize(dtype)), &bytes);
  EMBER_CHECK(ok, "[", op, "] the storage size of sizes ", sizes, " and strides ", strides,
              " overflows");
  return static_cast<size_t>(bytes);
}

Tensor empty_strided(const Shape& sizes, const Shape& strides, const TensorOptions& options) {
  EMBER_CHECK(sizes.size() == strides.size(), "[empty_strided] sizes ", sizes, " and strides ",
              strides, " differ in length");
  Device device = resolve_device(options.device);
  size_t nbytes = storage_bytes(sizes, strides, 0, options.dtype, "empty_strided");
  auto storage = std::make_shared<StorageImpl>(get_allocator(device).allocate(nbytes), nbytes);
  auto impl =
      std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, options.dtype, device);
  Tensor t(std::move(impl));
  if (options.requires_grad) t.requires_grad_(true);
  return t;
}

Tensor from_blob(void* data, const Shape& sizes, const Shape& strides, DType dtype, Device device,
                 std::function<void()> deleter) {
  EMBER_CHECK(sizes.size() == strides.size(), "[from_blob] sizes ", sizes, " and strides ", strides,
              " differ in length");
  size_t nbytes = storage_bytes(sizes, strides, 0, dtype, "from_blob");
  EMBER_CHECK(data != nullptr || nbytes == 0, "[from_blob] null data for ", nbytes, " bytes");
  auto* owner = new std::function<void()>(std::move(deleter));
  DataPtr ptr(
      data, owner,
      [](void* ctx) {
        auto* fn = static_cast<std::function<void()>*>(ctx);
        if (*fn) (*fn)();
        delete fn;
      },
      device);
  auto storage = std::make_shared<StorageImpl>(std::move(ptr), nbytes);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, dtype, device));
}

Tensor empty(const Shape& sizes, const TensorOptions& options) {
  numel_of(sizes);  // checks for negative sizes and overflow
  return empty_strided(sizes, contiguous_strides(sizes), options);
}

Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  return empty(t.sizes(), options);
}

// Note [Anonymous shared memory] (core/shared_memory.h). The storage keeps its identity and only
// its DataPtr changes, so views, dtypes, strides and autograd metadata all stay as they were.
Tensor& Tensor::share_memory_() {
  EMBER_CHECK(defined(), "[share_memory_] the tensor is undefined");
  EMBER_CHECK(is_cpu(),
              "[share_memory_] only CPU tensors can be moved to shared memory, this one is on ",
              device(), " (CUDA tensors travel through CUDA IPC)");
  EMBER_CHECK(
      !requires_grad() || is_leaf(),
      "[share_memory_] the tensor requires grad and is not a leaf: autograd cannot follow it into another process; "
      "share a leaf (a parameter) or a detach()ed copy");
  StorageImpl& s = *storage();
  if (is_shared_memory(s.data)) return *this;
  DataPtr shared = shared_memory_allocator().allocate(s.nbytes, s.data.device());
  if (s.nbytes) std::memcpy(shared.get(), s.data.get(), s.nbytes);
  s.data = std::move(shared);
  return *this;
}

bool Tensor::is_shared() const {
  return defined() && storage() && is_shared_memory(storage()->data);
}

}  // namespace ember
