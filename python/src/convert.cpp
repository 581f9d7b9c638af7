// Python values -> ember's C++ types: numbers, sizes, dims, devices, dtypes, and nested lists
// (torch.tensor's data).
#include <pybind11/numpy.h>

#include "bind.h"

namespace ember::python {
namespace {

bool is_python_bool(py::handle h) { return PyBool_Check(h.ptr()); }

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

}  // namespace

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
  // NumPy scalars and 0-dim arrays, and anything else with __index__ or __float__.
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !is_tensor(h)) {
    py::object kind = h.attr("dtype").attr("kind");
    std::string k = py::str(kind);
    if (py::len(h.attr("shape")) != 0) return std::nullopt;
    if (k == "b") return Scalar(h.attr("item")().cast<bool>());
    if (k == "i" || k == "u") return Scalar(h.attr("item")().cast<int64_t>());
    if (k == "f") return Scalar(h.attr("item")().cast<double>());
  }
  return std::nullopt;
}

Scalar to_scalar(py::handle h, const char* what) {
  if (std::optional<Scalar> s = as_scalar(h)) return *s;
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    if (t.numel() == 1) {
      py::gil_scoped_release no_gil;
      return t.item();
    }
  }
  throw py::type_error(std::string(what) + ": expected a number, got " + type_name(h));
}

bool is_tensor(py::handle h) { return py::isinstance<Tensor>(h); }

const Tensor& as_tensor(py::handle h) { return h.cast<const Tensor&>(); }

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
  throw py::type_error("expected a device (ember.device, a string such as 'cuda:0', or an int), got " +
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

// Nested lists of numbers: their shape (from the first element at each depth; every other must
// agree) and their values in row-major order.
struct Nested {
  Shape shape;
  std::vector<Scalar> values;
  Scalar::Kind kind = Scalar::Kind::Bool;
  bool any = false;
};

void walk(py::handle h, size_t depth, Nested& n) {
  if (std::optional<Scalar> s = as_scalar(h)) {
    if (depth != n.shape.size())
      throw py::value_error("tensor(): expected a sequence at depth " + std::to_string(depth) +
                            ", got a number (ragged nested lists)");
    if (static_cast<int>(s->kind()) > static_cast<int>(n.kind)) n.kind = s->kind();
    n.any = true;
    n.values.push_back(*s);
    return;
  }
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    if (t.numel() == 1 && t.dim() == 0) {
      walk(py::cast(t.item()), depth, n);
      return;
    }
  }
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    throw py::type_error("tensor(): expected a number or a sequence of numbers, got " +
                         type_name(h));
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  auto len = static_cast<int64_t>(py::len(seq));
  if (depth == n.shape.size()) {
    if (!n.values.empty())
      throw py::value_error("tensor(): expected a number at depth " + std::to_string(depth) +
                            ", got a sequence (ragged nested lists)");
    n.shape.push_back(len);
  } else if (depth > n.shape.size() || n.shape[depth] != len) {
    throw py::value_error("tensor(): expected a sequence of length " +
                          std::to_string(n.shape[depth]) + " at dim " + std::to_string(depth) +
                          " (got " + std::to_string(len) + ")");
  }
  for (py::handle item : seq) walk(item, depth + 1, n);
}

DType dtype_of_kind(Scalar::Kind k) {
  return k == Scalar::Kind::Float ? kFloat32 : k == Scalar::Kind::Int ? kInt64 : kBool;
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device) {
  if (is_tensor(data)) {
    const Tensor& t = as_tensor(data);
    py::gil_scoped_release no_gil;
    return t.detach().to(device, dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  if (py::isinstance<py::array>(data)) {
    py::object from_numpy = py::module_::import("ember").attr("from_numpy");
    Tensor t = from_numpy(data).cast<Tensor>();
    py::gil_scoped_release no_gil;
    return t.to(device, dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  Nested n;
  walk(data, 0, n);
  // An empty list has no values to say: float32, as PyTorch.
  DType natural = n.any ? dtype_of_kind(n.kind) : kFloat32;
  Tensor t;
  {
    // Built in float64 / int64 / bool, then converted: one conversion for the whole tensor.
    switch (natural) {
      case kFloat32: {
        std::vector<double> v;
        v.reserve(n.values.size());
        for (const Scalar& s : n.values) v.push_back(s.to_double());
        t = from_vector(v, n.shape);
        break;
      }
      case kInt64: {
        std::vector<int64_t> v;
        v.reserve(n.values.size());
        for (const Scalar& s : n.values) v.push_back(s.to_int());
        t = from_vector(v, n.shape);
        break;
      }
      default: {
        std::vector<uint8_t> v;
        v.reserve(n.values.size());
        for (const Scalar& s : n.values) v.push_back(s.to<bool>());
        t = from_vector(v, n.shape).to(kBool);
        break;
      }
    }
  }
  if (n.shape.empty() && !n.values.empty()) t = t.reshape({});
  py::gil_scoped_release no_gil;
  return t.to(device, dtype.value_or(natural));
}

py::object to_size(const Shape& s) {
  // Never destroyed: it must outlive the interpreter's own teardown.
  static auto* size_type = new py::object(py::module_::import("ember._size").attr("Size"));
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return (*size_type)(t);
}

}  // namespace ember::python
