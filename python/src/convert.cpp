// Python values -> ember's C++ types: numbers, sizes, dims, devices, dtypes, and nested lists
// (torch.tensor's data).
#include <pybind11/numpy.h>

#include "bind.h"

namespace ember::python {
namespace {

bool is_python_bool(py::handle h) { return PyBool_Check(h.ptr()); }

}  // namespace

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

std::optional<Scalar> as_scalar(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0)
      throw py::value_error("integer " + std::string(py::str(h)) + " does not fit in int64");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o))
    return Scalar(Complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  // NumPy scalars and 0-dim arrays, and anything else with __index__ or __float__.
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !is_tensor(h)) {
    py::object kind = h.attr("dtype").attr("kind");
    std::string k = py::str(kind);
    if (py::len(h.attr("shape")) != 0) return std::nullopt;
    if (k == "b") return Scalar(h.attr("item")().cast<bool>());
    if (k == "i" || k == "u") return Scalar(h.attr("item")().cast<int64_t>());
    if (k == "f") return Scalar(h.attr("item")().cast<double>());
    if (k == "c") {
      py::object v = h.attr("item")();
      return Scalar(Complex<double>(PyComplex_RealAsDouble(v.ptr()), PyComplex_ImagAsDouble(v.ptr())));
    }
  }
  return std::nullopt;
}

py::object scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to<bool>());
  if (s.is_integral()) return py::int_(s.to_int());
  if (s.is_complex())
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(s.to_double(), s.imag()));
  return py::float_(s.to_double());
}

Scalar to_scalar(py::handle h, const char* what) {
  if (std::optional<Scalar> s = as_scalar(h)) return *s;
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    if (t.numel() == 1) {
      ReleaseGil no_gil;
      return t.item();
    }
  }
  throw py::type_error(std::string(what) + ": expected a number, got " + type_name(h));
}

namespace {
PyTypeObject* g_tensor_type = nullptr;  // ember.Tensor, set once by bind_tensor
}

void set_tensor_type(py::handle type) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(type.ptr());
}

// The per-op overhead bar (a + b from Python at most PyTorch's) makes these two the hot path of
// every binding: a type check against the cached type, and the value read straight from the
// instance (one C++ base: pybind11's simple layout) instead of a type-registry lookup each.
bool is_tensor(py::handle h) { return PyObject_TypeCheck(h.ptr(), g_tensor_type) != 0; }

const Tensor& as_tensor(py::handle h) {
  if (!is_tensor(h)) throw py::type_error("expected an ember.Tensor, got " + type_name(h));
  void* p = reinterpret_cast<py::detail::instance*>(h.ptr())->get_value_and_holder().value_ptr();
  if (p == nullptr)
    throw py::type_error("the ember.Tensor was not initialised (__init__ not called)");
  return *static_cast<const Tensor*>(p);
}

Shape to_shape(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) && !is_python_bool(h)) return Shape{h.cast<int64_t>()};
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    throw py::type_error(std::string(what) + ": expected a sequence of ints for a size, got " +
                         type_name(h));
  Shape s;
  for (py::handle item : h) {
    if (py::hasattr(item, "__index__") && !is_python_bool(item) && !is_tensor(item)) {
      s.push_back(py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr())).cast<int64_t>());
    } else {
      throw py::type_error(std::string(what) + ": sizes must be ints, got " + type_name(item));
    }
  }
  return s;
}

Shape to_shape(const py::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_shape(py::handle(args[0]), what);
  return to_shape(static_cast<py::handle>(args), what);
}

Dims to_dims(py::handle h, const char* what) {
  if (h.is_none()) return Dims();
  if (PyLong_Check(h.ptr()) && !is_python_bool(h)) return Dims(h.cast<int64_t>());
  Shape s = to_shape(h, what);
  Dims d;
  for (int64_t v : s) d.push_back(v);
  return d;
}

Device to_device(py::handle h) {
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return Device(h.cast<std::string>());
  if (PyLong_Check(h.ptr()) && !is_python_bool(h)) return Device(kCUDA, h.cast<int>());
  throw py::type_error(
      "expected a device (ember.device, a string such as 'cuda:0', or an int), got " +
      type_name(h));
}

DType to_dtype(py::handle h) {
  if (py::isinstance<DType>(h)) return h.cast<DType>();
  // Python's own types, as PyTorch accepts them: float -> float32 (the default), int -> int64.
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return kFloat32;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return kInt64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return kBool;
  throw py::type_error("expected a dtype (ember.float32, ...), got " + type_name(h));
}

TensorOptions to_options(py::handle dtype, py::handle device, bool requires_grad) {
  TensorOptions o;
  if (!dtype.is_none()) o.with_dtype(to_dtype(dtype));
  if (!device.is_none()) o.with_device(to_device(device));
  o.with_requires_grad(requires_grad);
  return o;
}

namespace {

// Python's nested sequences, walked as ember::tensor walks C++ braces: TensorData checks the
// shape and infers the dtype, so the rules (and the ValueError for ragged data) are the C++ API's.
void walk(py::handle h, size_t dim, TensorData& out) {
  if (std::optional<Scalar> s = as_scalar(h)) {
    out.value(dim, *s);
    return;
  }
  if (is_tensor(h) && as_tensor(h).dim() == 0) {
    out.value(dim, as_tensor(h).item());
    return;
  }
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    throw py::type_error("tensor(): expected a number or a sequence of numbers, got " +
                         type_name(h));
  out.list(dim, static_cast<int64_t>(py::len(h)));
  for (py::handle item : h) walk(item, dim + 1, out);
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device) {
  if (is_tensor(data)) {
    const Tensor& t = as_tensor(data);
    ReleaseGil no_gil;
    return t.detach().to(device, dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  if (py::isinstance<py::array>(data)) {
    py::object from_numpy = py::module_::import("ember").attr("from_numpy");
    Tensor t = from_numpy(data).cast<Tensor>();
    ReleaseGil no_gil;
    return t.to(device, dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  TensorData values;
  walk(data, 0, values);
  TensorOptions options = TensorOptions().with_device(device);
  if (dtype) options.with_dtype(*dtype);
  ReleaseGil no_gil;
  return values.make(options);
}

ToArgs to_args(const py::args& args, const py::kwargs& kwargs) {
  ToArgs r;
  int flags = 0;  // positional bools: non_blocking, then copy
  for (py::handle a : args) {
    if (py::isinstance<DType>(a)) {
      r.dtype = a.cast<DType>();
    } else if (is_tensor(a)) {
      r.device = as_tensor(a).device();
      r.dtype = as_tensor(a).dtype();
    } else if (PyBool_Check(a.ptr())) {
      (flags++ == 0 ? r.non_blocking : r.copy) = a.cast<bool>();
    } else if (!a.is_none()) {
      r.device = to_device(a);
    }
  }
  for (auto [k, v] : kwargs) {
    std::string key = py::str(k);
    if (key == "device") {
      if (!v.is_none()) r.device = to_device(v);
    } else if (key == "dtype") {
      if (!v.is_none()) r.dtype = to_dtype(v);
    } else if (key == "non_blocking") {
      r.non_blocking = v.cast<bool>();
    } else if (key == "copy") {
      r.copy = v.cast<bool>();
    } else if (key != "memory_format") {
      throw py::type_error("to() got an unexpected keyword argument '" + key + "'");
    }
  }
  return r;
}

Pair to_pair(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr())) {
    int64_t v = h.cast<int64_t>();
    return {v, v};
  }
  Shape s = to_shape(h, what);
  if (s.size() != 2)
    throw py::value_error(std::string(what) + ": expected an int or a pair of ints");
  return {s[0], s[1]};
}

py::object to_size(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return python_object("Size")(t);
}

}  // namespace ember::python
