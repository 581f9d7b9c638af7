// Tensor: a view (sizes, strides, offset, dtype) of a Storage on a device, plus its autograd state.
// Metadata methods are defined in core/tensor.cpp; the op methods (`add`, `sum`, `view`, ...) are
// declared here so that `x.add(y)` reads like PyTorch, and defined in ops/tensor_methods.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/hook_list.h"
#include "ember/core/scalar.h"
#include "ember/core/shape.h"
#include "ember/core/storage.h"

namespace ember {

struct AutogradMeta;
class Node;
class Tensor;

struct TensorImpl {
  TensorImpl(Storage storage, const Shape& sizes, const Shape& strides, int64_t offset, DType dtype,
             Device device);
  ~TensorImpl();
  /// Recomputes numel and contiguity after sizes or strides changed.
  void refresh();

  Storage storage;
  Shape sizes;
  Shape strides;   // in elements
  int64_t offset;  // in elements
  int64_t numel = 0;
  DType dtype;
  Device device;  // always with an index
  bool contiguous = true;
  std::unique_ptr<AutogradMeta> autograd;  // null until the tensor takes part in autograd
  // A view made under grad mode keeps the tensor that owns its memory (never itself a view), so
  // that an in-place op on the view can rewrite the base's history; view_version is the storage
  // version its own history matches (ops/autograd_support.cpp).
  std::shared_ptr<TensorImpl> view_base;
  uint32_t view_version = 0;
};

/// Options for factories: dtype, device and requires_grad, chainable like torch::TensorOptions.
struct TensorOptions {
  DType dtype = kDefaultFloat;
  Device device = Device(DeviceType::CPU, 0);
  bool requires_grad = false;
  bool has_dtype = false;  // dtype was given (tensor() infers it from the data otherwise)

  TensorOptions() = default;
  TensorOptions(DType d) : dtype(d), has_dtype(true) {}  // NOLINT
  TensorOptions(Device d) : device(d) {}                 // NOLINT
  TensorOptions(const char* d) : device(d) {}            // NOLINT
  TensorOptions(DeviceType d) : device(d) {}             // NOLINT
  TensorOptions& with_dtype(DType d) {
    dtype = d;
    has_dtype = true;
    return *this;
  }
  TensorOptions& with_device(Device d) {
    device = d;
    return *this;
  }
  TensorOptions& with_requires_grad(bool r = true) {
    requires_grad = r;
    return *this;
  }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- metadata (core/tensor.cpp) ---
  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const { return impl_->sizes; }
  const Shape& shape() const { return impl_->sizes; }
  const Shape& strides() const { return impl_->strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel; }
  DType dtype() const { return impl_->dtype; }
  DType scalar_type() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_cuda() const { return impl_->device.is_cuda(); }
  bool is_cpu() const { return impl_->device.is_cpu(); }
  /// The device index (-1 for cpu:0, like PyTorch's CPU tensors; N for cpu:N and cuda:N).
  int get_device() const;
  bool is_contiguous() const { return impl_->contiguous; }
  bool is_floating_point() const { return ember::is_floating_point(impl_->dtype); }
  bool is_complex() const { return ember::is_complex(impl_->dtype); }
  int64_t storage_offset() const { return impl_->offset; }
  size_t element_size() const { return itemsize(impl_->dtype); }
  size_t nbytes() const { return static_cast<size_t>(impl_->numel) * element_size(); }
  TensorOptions options() const;
  /// Address of the first element (storage + offset).
  void* data_ptr() const;
  /// Typed address; throws if T is not the tensor's dtype.
  template <typename T>
  T* data_ptr() const {
    EMBER_CHECK(dtype_of<T> == dtype(), "[data_ptr] expected a tensor of dtype ", dtype_of<T>,
                ", got ", dtype());
    return static_cast<T*>(data_ptr());
  }
  const Storage& storage() const { return impl_->storage; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  /// Whether the two tensors share memory (same storage).
  bool is_alias_of(const Tensor& o) const { return impl_->storage == o.impl_->storage; }
  /// Number of in-place modifications of this tensor's storage.
  uint32_t _version() const { return impl_->storage->version.load(std::memory_order_relaxed); }
  void bump_version() const { impl_->storage->version.fetch_add(1, std::memory_order_relaxed); }
  std::string toString() const;  // "CPUFloatType{2,3}"-like summary: "float32[2, 3] on cpu"

  // --- autograd (core/autograd_meta.cpp, autograd/engine.cpp) ---
  /// Whether this is a view made under grad mode; _base() is then the tensor it views.
  bool is_view() const { return impl_->view_base != nullptr; }
  Tensor _base() const;
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  /// The accumulated gradient of a leaf (undefined until backward reaches it).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  void set_grad(const Tensor& grad) const;
  const std::shared_ptr<Node>& grad_fn() const;
  bool is_leaf() const;
  /// Keeps .grad() for a non-leaf tensor.
  void retain_grad() const;
  bool retains_grad() const;
  /// Computes gradients of this tensor w.r.t. the leaves (autograd/engine.cpp).
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                bool create_graph = false) const;
  /// Makes this tensor (its handle and every copy of it) refer to `data`'s memory, shape, dtype
  /// and device, keeping its autograd identity: how Module::to moves parameters in place.
  void set_data(const Tensor& data) const;
  /// A tensor sharing data, cut from the graph.
  Tensor detach() const;
  Tensor& detach_();
  /// A hook on this tensor's gradient; it may return a replacement (or an undefined tensor).
  RemovableHandle register_hook(std::function<Tensor(const Tensor&)> hook) const;
  /// Called with the leaf after its .grad() has been accumulated, on the stream current when the
  /// leaf was first used in the graph (distributed training starts its all-reduces here).
  RemovableHandle register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;

  // --- conversion and copies (ops/) ---
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  Tensor to(const char* device, bool non_blocking = false, bool copy = false) const {
    return to(Device(device), non_blocking, copy);
  }
  Tensor cuda(int index = -1, bool non_blocking = false) const;
  Tensor cpu() const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor contiguous() const;
  Tensor& fill_(Scalar value);
  Tensor& zero_();
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  /// The elements in row-major order, converted to T.
  template <typename T>
  std::vector<T> tolist() const;
  /// Pinned (page-locked) host copy: asynchronous copies to the GPU need it.
  Tensor pin_memory() const;
  bool is_pinned() const;
  /// Moves the storage into anonymous shared memory in place, so that every view of it follows and
  /// processes forked or sent the tensor afterwards see one memory (torch.Tensor.share_memory_).
  /// A no-op when already shared; CPU tensors only; not for a non-leaf that requires grad.
  Tensor& share_memory_();
  /// Whether the storage is in shared memory.
  bool is_shared() const;
  /// Marks the memory as used on a CUDA stream (see cuda::Stream).
  void record_stream(uintptr_t stream) const;

  // --- views (ops/views.cpp) ---
  Tensor view(const Shape& shape) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(const Shape& shape) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(const Shape& dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(const Shape& split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor repeat(const Shape& repeats) const;  // a copy (ops/join.cpp)

  // --- elementwise (ops/elementwise.cpp) ---
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor& pow_(const Tensor& exponent);
  Tensor& pow_(Scalar exponent);
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor addcmul(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor& lerp_(const Tensor& end, Scalar weight);

#define EMBER_DECLARE_UNARY_METHOD(name) \
  Tensor name() const;                   \
  Tensor& name##_();
  EMBER_DECLARE_UNARY_METHOD(neg)
  EMBER_DECLARE_UNARY_METHOD(abs)
  EMBER_DECLARE_UNARY_METHOD(exp)
  EMBER_DECLARE_UNARY_METHOD(log)
  EMBER_DECLARE_UNARY_METHOD(sqrt)
  EMBER_DECLARE_UNARY_METHOD(rsqrt)
  EMBER_DECLARE_UNARY_METHOD(tanh)
  EMBER_DECLARE_UNARY_METHOD(sigmoid)
  EMBER_DECLARE_UNARY_METHOD(relu)
  EMBER_DECLARE_UNARY_METHOD(sin)
  EMBER_DECLARE_UNARY_METHOD(cos)
  EMBER_DECLARE_UNARY_METHOD(square)
  EMBER_DECLARE_UNARY_METHOD(reciprocal)
  EMBER_DECLARE_UNARY_METHOD(sign)
  EMBER_DECLARE_UNARY_METHOD(floor)
  EMBER_DECLARE_UNARY_METHOD(ceil)
  EMBER_DECLARE_UNARY_METHOD(round)
  EMBER_DECLARE_UNARY_METHOD(log1p)
  EMBER_DECLARE_UNARY_METHOD(expm1)
  EMBER_DECLARE_UNARY_METHOD(logical_not)
#undef EMBER_DECLARE_UNARY_METHOD
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(Scalar o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(Scalar o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(Scalar o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(Scalar o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(Scalar o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(Scalar o) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8) const;

  // --- reductions (ops/reduce.cpp) ---
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(const Dims& dims, bool keepdim = false,
             std::optional<DType> dtype = std::nullopt) const;
  Tensor mean() const;
  Tensor mean(const Dims& dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const Dims& dims = {}, bool keepdim = false) const;
  Tensor amin(const Dims& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  /// Over `dims` (all when empty), with Bessel's correction when `unbiased`.
  Tensor var(const Dims& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor std(const Dims& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor all() const;
  Tensor any() const;
  Tensor norm(Scalar p = 2) const;
  Tensor logsumexp(const Dims& dims, bool keepdim = false) const;

  // --- linear algebra and nn (ops/) ---
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor index_select(int64_t dim, const Tensor& index) const;

  // Operators with assignment.
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(Scalar o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(Scalar o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(Scalar o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(Scalar o) { return div_(o); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

/// Prints like PyTorch: `tensor([[1.0000, 2.0000]], device='cuda:0', requires_grad=True)`.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// A tensor of uninitialised memory (core/tensor.cpp): the allocation every op starts from.
Tensor empty(const Shape& sizes, const TensorOptions& options = {});
/// Like empty, with explicit strides.
Tensor empty_strided(const Shape& sizes, const Shape& strides, const TensorOptions& options = {});
/// A tensor over memory ember did not allocate (a NumPy array, a DLPack capsule): `deleter` runs
/// once when the last tensor using it is gone. The memory must stay valid until then.
Tensor from_blob(void* data, const Shape& sizes, const Shape& strides, DType dtype, Device device,
                 std::function<void()> deleter);
Tensor empty_like(const Tensor& t);
Tensor empty_like(const Tensor& t, const TensorOptions& options);
/// The bytes a layout reaches from the start of its storage; throws on negative sizes, strides or
/// offset and on overflow.
size_t storage_bytes(const Shape& sizes, const Shape& strides, int64_t offset, DType dtype,
                     const char* op);

/// Fails with a clear error unless `device` exists; resolves `cuda` to the current device.
Device resolve_device(Device device);

}  // namespace ember
