#include "ember/ops/copy.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "ember/core/profiler_events.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/op_entry.h"

namespace ember {

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  EMBER_OP_METHOD(copy_, src, non_blocking);
  check_defined("copy_", src, "src");
  Shape shape = broadcast_shapes(sizes(), src.sizes(), "copy_");
  EMBER_CHECK(shape == sizes(), "[copy_] the source of shape ", src.sizes(),
              " cannot be broadcast to the destination's shape ", sizes());
  bool grad = any_requires_grad({this, &src});
  if (grad) check_inplace(*this, "copy_");
  if (is_same(src)) return *this;
  check_no_overlap("copy_", *this, {&src});
  // A copy between devices is an event of its own kind, with its bytes (PyTorch's "Memcpy
  // HtoD"): the transfers the guides call expensive stand out in a profile. H is the host (a CPU
  // device, virtual ones included), D a GPU.
  std::optional<profiler::RecordScope> transfer;
  if (device() != src.device() && profiler::active_session()) {
    auto side = [](const Device& d) { return d.is_cpu() ? "H" : "D"; };
    transfer.emplace(profiler::EventKind::Memcpy,
                     std::string("Memcpy ") + side(src.device()) + "to" + side(device()));
    transfer->event().bytes = numel() * static_cast<int64_t>(itemsize(dtype()));
    transfer->event().device = device();
  }
  if (numel() > 0) {
    if (is_cpu() && src.is_cpu()) {
      TensorIter it(*this, {src});  // virtual CPU devices share host memory
      copy_cpu(it);
    } else if (device() == src.device()) {
      TensorIter it(*this, {src});
      copy_cuda(it);
    } else {
      copy_between_devices_cuda(*this, src.sizes() == sizes() ? src : src.expand(sizes()),
                                non_blocking);
    }
  }
  bump_version();
  if (grad) {
    record("CopyBackwards", {this}, {this, &src},
           [ss = src.sizes(), sd = src.device(), st = src.dtype()](const Tensor& g,
                                                                   const Node& n) -> TensorList {
             Tensor gsrc;
             if (n.needs_input_grad(1)) gsrc = sum_to(g, ss).to(sd, st);
             return {Tensor(), gsrc};  // the overwritten values get no gradient
           });
    rebase_history(*this);
  }
  return *this;
}

Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking, bool copy) {
  EMBER_OP(to, t, device, dtype, non_blocking, copy);
  check_defined("to", t);
  Device target = resolve_device(device);
  if (target == t.device() && dtype == t.dtype() && !copy) return t;
  Tensor out = empty(t.sizes(), TensorOptions(dtype).with_device(target));
  {
    NoGradGuard no_grad;
    out.copy_(t, non_blocking);
  }
  if (any_requires_grad({&t})) {
    record("ToCopyBackward0", {&out}, {&t},
           [sd = t.device(), st = t.dtype()](const Tensor& g) -> TensorList {
             return {g.to(sd, st)};
           });
  }
  return out;
}

Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return ember::to(*this, device, dtype(), non_blocking, copy);
}
Tensor Tensor::to(DType dtype, bool non_blocking, bool copy) const {
  return ember::to(*this, device(), dtype, non_blocking, copy);
}
Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  return ember::to(*this, device, dtype, non_blocking, copy);
}
Tensor Tensor::to(const TensorOptions& o, bool non_blocking, bool copy) const {
  return ember::to(*this, o.device, o.dtype, non_blocking, copy);
}
Tensor Tensor::cuda(int index, bool non_blocking) const {
  return to(Device(DeviceType::CUDA, index), non_blocking);
}
Tensor Tensor::cpu() const { return to(Device(DeviceType::CPU, 0)); }

Tensor Tensor::clone() const {
  EMBER_OP_METHOD(clone);
  Tensor out = empty(sizes(), options());
  {
    NoGradGuard no_grad;
    out.copy_(*this);
  }
  if (any_requires_grad({this}))
    record("CloneBackward0", {&out}, {this}, [](const Tensor& g) -> TensorList { return {g}; });
  return out;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

namespace {

// PyTorch's checked conversion of a fill value (c10::overflows): a float must lie within the
// dtype's range (infinities fill floating dtypes only, NaN too); an int must fit, except that a
// negative one may wrap into uint8 as two's complement (`a - b` as `a + 255 * b`).
void check_fits(const Scalar& v, DType t) {
  if (t == kBool || t == kFloat64 || is_complex(t)) return;
  EMBER_CHECK(!v.is_complex(), "[fill_] value ", v, " cannot be converted to type ", t,
              " without overflow");
  double hi = is_integral(t, false) ? static_cast<double>(integral_max(t))
              : t == kFloat16       ? 65504.0
              : t == kFloat32       ? static_cast<double>(std::numeric_limits<float>::max())
                                    : 3.38953138925153547590e38;  // bfloat16's largest
  double lo = is_integral(t, false) ? static_cast<double>(integral_min(t)) : -hi;
  bool fits;
  if (v.is_floating_point()) {
    double d = v.to_double();
    fits = std::isinf(d) || std::isnan(d) ? is_floating_point(t) : d >= lo && d <= hi;
  } else {
    int64_t i = v.to_int();
    fits =
        t == kInt64 || (t == kUInt8 ? i >= -255 && i <= 255
                                    : static_cast<double>(i) >= lo && static_cast<double>(i) <= hi);
  }
  EMBER_CHECK(fits, "[fill_] value ", v, " cannot be converted to type ", t, " without overflow");
}

}  // namespace

Tensor& Tensor::fill_(Scalar value) {
  EMBER_OP_METHOD(fill_, value);
  check_fits(value, dtype());
  bool grad = any_requires_grad({this});
  if (grad) check_inplace(*this, "fill_");
  if (numel() > 0) {
    TensorIter it(*this, {});
    EMBER_DISPATCH_DEVICE(device(), fill, it, value);
  }
  bump_version();
  if (grad) {  // the old values get no gradient: the tensor is now a constant
    record("FillBackward0", {this}, {this}, [](const Tensor&) -> TensorList { return {Tensor()}; });
    rebase_history(*this);
  }
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

Scalar Tensor::item() const {
  EMBER_CHECK(defined(), "[item] undefined tensor");
  EMBER_CHECK(numel() == 1, "[item] a Tensor with ", numel(),
              " elements cannot be converted to Scalar");
  Tensor c = is_cpu() ? *this : to(Device(DeviceType::CPU, 0));
  return dispatch_all_and_complex(c.dtype(), "item", [&](auto tag) -> Scalar {
    using T = EMBER_TYPE(tag);
    return Scalar(*static_cast<const T*>(c.data_ptr()));
  });
}

Tensor Tensor::pin_memory() const {
  EMBER_OP_METHOD(pin_memory);
  EMBER_CHECK(is_cpu(), "[pin_memory] only CPU tensors can be pinned, this one is on ", device());
  return pin_memory_cuda(*this);
}

bool Tensor::is_pinned() const { return is_cpu() && is_pinned_cuda(*this); }

void Tensor::record_stream(uintptr_t stream) const {
  EMBER_CHECK(is_cuda(), "[record_stream] expected a CUDA tensor, got one on ", device());
  record_stream_cuda(*this, stream);
}

}  // namespace ember
