// Tensors shared with NumPy and any DLPack library (PyTorch, JAX, CuPy) without a copy:
// Tensor.numpy(), np.asarray(t), ember.from_numpy(a), Tensor.__dlpack__/__dlpack_device__ and
// ember.from_dlpack(x).
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include "bind.h"
#include "ember/core/dlpack.h"

namespace ember::python {
namespace {

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case kFloat32:
      return py::dtype::of<float>();
    case kFloat64:
      return py::dtype::of<double>();
    case kFloat16:
      return py::dtype("float16");
    case kInt64:
      return py::dtype::of<int64_t>();
    case kInt32:
      return py::dtype::of<int32_t>();
    case kInt16:
      return py::dtype::of<int16_t>();
    case kInt8:
      return py::dtype::of<int8_t>();
    case kUInt8:
      return py::dtype::of<uint8_t>();
    case kBool:
      return py::dtype::of<bool>();
    case kComplex64:
      return py::dtype("complex64");
    case kComplex128:
      return py::dtype("complex128");
    default:
      throw py::type_error(std::string("numpy() has no dtype for ember.") + dtype_name(t) +
                           ": convert it first, e.g. .float()");
  }
}

DType ember_dtype(const py::dtype& d) {
  char kind = d.kind();
  auto size = d.itemsize();
  if (kind == 'f' && size == 4) return kFloat32;
  if (kind == 'f' && size == 8) return kFloat64;
  if (kind == 'f' && size == 2) return kFloat16;
  if (kind == 'i' && size == 8) return kInt64;
  if (kind == 'i' && size == 4) return kInt32;
  if (kind == 'i' && size == 2) return kInt16;
  if (kind == 'i' && size == 1) return kInt8;
  if (kind == 'u' && size == 1) return kUInt8;
  if (kind == 'b') return kBool;
  if (kind == 'c' && size == 8) return kComplex64;
  if (kind == 'c' && size == 16) return kComplex128;
  throw py::type_error("can't convert np.ndarray of type " + std::string(py::str(d.attr("name"))) +
                       ". The only supported types are: float64, float32, float16, complex64, "
                       "complex128, int64, int32, int16, int8, uint8, and bool.");
}

py::array to_numpy(const Tensor& t) {
  if (!t.is_cpu())
    throw py::type_error("can't convert " + t.device().str() +
                         " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                         "host memory first.");
  if (t.requires_grad())
    throw std::runtime_error(
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * t.element_size()));
  // The array's base owns a handle to the tensor: the memory lives as long as either.
  auto* owner = new Tensor(t);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, strides, t.data_ptr(), base);
}

Tensor from_numpy(py::array a) {
  DType dtype = ember_dtype(a.dtype());
  auto item = static_cast<int64_t>(a.itemsize());
  Shape sizes, strides;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    sizes.push_back(a.shape(i));
    auto s = static_cast<int64_t>(a.strides(i));
    if (s < 0)
      throw py::value_error(
          "At least one stride in the given numpy array is negative: make a "
          "copy first (a.copy())");
    if (s % item != 0)
      throw py::value_error("the numpy array's strides are not multiples of its itemsize");
    strides.push_back(s / item);
  }
  auto* keep = new py::object(a);  // released under the GIL when the last tensor goes
  return from_blob(a.mutable_data(), sizes, strides, dtype, Device(kCPU, 0), [keep] {
    if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    delete keep;
  });
}

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

py::capsule to_capsule(const Tensor& t) {
  DLManagedTensor* m = to_dlpack(t);
  // The capsule's destructor frees the tensor only if no consumer took it (and renamed it).
  return py::capsule(m, kCapsule, [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, kCapsule)) {
      auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsule));
      if (mt != nullptr && mt->deleter != nullptr) mt->deleter(mt);
    }
  });
}

Tensor from_capsule(py::handle cap) {
  if (!PyCapsule_IsValid(cap.ptr(), kCapsule))
    throw py::value_error(
        "from_dlpack: expected a DLPack capsule named 'dltensor' that was not "
        "consumed yet");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), kCapsule));
  Tensor t = from_dlpack(m);  // owns m from here
  PyCapsule_SetName(cap.ptr(), kUsedCapsule);
  return t;
}

}  // namespace

void bind_interop(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor.def("numpy", &to_numpy, "The tensor's memory as a NumPy array (CPU only, no copy).")
      .def(
          "__array__",
          [](const Tensor& t, py::handle dtype) -> py::object {
            py::array a = to_numpy(t.requires_grad() ? t.detach() : t);
            if (dtype.is_none()) return a;
            return a.attr("astype")(dtype, "copy"_a = false);
          },
          "dtype"_a = py::none())
      .def(
          "__dlpack__",
          [](const Tensor& t, py::handle stream) {
            if (t.is_cuda() && !stream.is_none()) {
              // The consumer works on `stream`: order it after the work queued on ours.
              int64_t s = stream.cast<int64_t>();
              cuda::Stream consumer(t.device().index(), s == 1 ? 0 : static_cast<uintptr_t>(s));
              consumer.wait_stream(cuda::current_stream(t.device().index()));
            }
            return to_capsule(t);
          },
          "stream"_a = py::none())
      .def("__dlpack_device__", [](const Tensor& t) { return dlpack_device(t); });
  m.def("from_numpy", &from_numpy, "ndarray"_a,
        "A tensor sharing the NumPy array's memory (no copy).");
  m.def(
      "from_dlpack",
      [](py::handle x) {
        if (PyCapsule_CheckExact(x.ptr())) return from_capsule(x);
        if (!py::hasattr(x, "__dlpack__"))
          throw py::type_error(
              "from_dlpack: expected an object with __dlpack__ or a DLPack capsule");
        py::object cap;
        auto dev = x.attr("__dlpack_device__")().cast<std::pair<int, int>>();
        if (dev.first == kDLCUDA) {
          // The producer orders its work before ember's current stream on that device.
          uintptr_t s = cuda::current_stream(dev.second).handle();
          cap = x.attr("__dlpack__")("stream"_a = s == 0 ? 1 : static_cast<int64_t>(s));
        } else {
          cap = x.attr("__dlpack__")();
        }
        return from_capsule(cap);
      },
      "ext_tensor"_a, "A tensor sharing the memory of any object that supports DLPack.");
  m.def("_to_dlpack", &to_capsule, "tensor"_a);
}

}  // namespace ember::python
