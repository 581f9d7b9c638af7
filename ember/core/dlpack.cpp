#include "ember/core/dlpack.h"

#include <dlpack/dlpack.h>

#include <utility>

namespace ember {
namespace {

DLDataType dl_dtype(DType t) {
  switch (t) {
    case DType::Float32:
      return {kDLFloat, 32, 1};
    case DType::Float64:
      return {kDLFloat, 64, 1};
    case DType::Float16:
      return {kDLFloat, 16, 1};
    case DType::BFloat16:
      return {kDLBfloat, 16, 1};
    case DType::Int64:
      return {kDLInt, 64, 1};
    case DType::Int32:
      return {kDLInt, 32, 1};
    case DType::Int16:
      return {kDLInt, 16, 1};
    case DType::Int8:
      return {kDLInt, 8, 1};
    case DType::UInt8:
    case DType::Bool:
      return {kDLUInt, 8, 1};
    case DType::Complex32:
      return {kDLComplex, 32, 1};
    case DType::Complex64:
      return {kDLComplex, 64, 1};
    case DType::Complex128:
      return {kDLComplex, 128, 1};
  }
  EMBER_ASSERT(false, "unknown dtype");
  return {};
}

DType ember_dtype(const DLDataType& d) {
  EMBER_CHECK(d.lanes == 1, "[from_dlpack] vector types (lanes = ", int(d.lanes),
              ") are not supported");
  if (d.code == kDLFloat && d.bits == 32) return DType::Float32;
  if (d.code == kDLFloat && d.bits == 64) return DType::Float64;
  if (d.code == kDLFloat && d.bits == 16) return DType::Float16;
  if (d.code == kDLBfloat && d.bits == 16) return DType::BFloat16;
  if (d.code == kDLInt && d.bits == 64) return DType::Int64;
  if (d.code == kDLInt && d.bits == 32) return DType::Int32;
  if (d.code == kDLInt && d.bits == 16) return DType::Int16;
  if (d.code == kDLInt && d.bits == 8) return DType::Int8;
  if (d.code == kDLUInt && d.bits == 8) return DType::UInt8;
  if (d.code == kDLComplex && d.bits == 32) return DType::Complex32;
  if (d.code == kDLComplex && d.bits == 64) return DType::Complex64;
  if (d.code == kDLComplex && d.bits == 128) return DType::Complex128;
  EMBER_FAIL("[from_dlpack] unsupported DLPack dtype (code ", int(d.code), ", ", int(d.bits),
             " bits): ember has float16/32/64, bfloat16, complex32/64/128, int8/16/32/64, uint8 and bool");
}

// What a DLManagedTensor made by to_dlpack owns: the tensor (its storage) and the shape and
// strides arrays the DLTensor points into.
struct Exported {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
};

}  // namespace

std::pair<int, int> dlpack_device(const Tensor& t) {
  if (t.is_cuda()) return {kDLCUDA, t.device().index()};
  return {kDLCPU, 0};
}

DLManagedTensor* to_dlpack(const Tensor& t) {
  EMBER_CHECK(t.defined(), "[to_dlpack] the tensor is undefined");
  auto* e = new Exported{
      t, {t.sizes().begin(), t.sizes().end()}, {t.strides().begin(), t.strides().end()}, {}};
  DLTensor& dl = e->managed.dl_tensor;
  // The first element itself, byte_offset 0, as PyTorch and NumPy export: consumers that ignore
  // byte_offset (PyTorch 1.13's from_dlpack) would otherwise read a view from its base's start.
  dl.data = t.data_ptr();
  dl.byte_offset = 0;
  auto [type, id] = dlpack_device(t);
  dl.device = {static_cast<DLDeviceType>(type), id};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<Exported*>(self->manager_ctx);
  };
  return &e->managed;
}

Tensor from_dlpack(DLManagedTensor* src) {
  EMBER_CHECK(src != nullptr, "[from_dlpack] null DLManagedTensor");
  const DLTensor& dl = src->dl_tensor;
  Device device(kCPU, 0);
  if (dl.device.device_type == kDLCUDA) {
    device = resolve_device(Device(kCUDA, dl.device.device_id));
  } else {
    EMBER_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
                "[from_dlpack] unsupported device type ", int(dl.device.device_type),
                " (ember takes CPU and CUDA tensors)");
  }
  DType dtype = ember_dtype(dl.dtype);
  EMBER_CHECK(dl.ndim >= 0, "[from_dlpack] negative ndim ", dl.ndim);
  Shape sizes(dl.shape, dl.shape + dl.ndim);
  // Absent strides mean row-major (DLPack < 0.8 allows it).
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  return from_blob(data, sizes, strides, dtype, device, [src] {
    if (src->deleter) src->deleter(src);
  });
}

}  // namespace ember
