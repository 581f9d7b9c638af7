// The functions of the `ember` module that make tensors (factories) or join them. The math
// functions (ember.exp(x), ember.sum(x, dim=1), ...) are Tensor's methods under the module's names
// (ember/__init__.py).
#include "bind.h"
#include "ember/ops/tensor_index.h"

namespace ember::python {
namespace {

// f(*size, dtype=None, device=None, requires_grad=False) for zeros, ones, empty, rand, randn.
template <typename F>
void def_sized(py::module_& m, const char* name, F make, const char* doc) {
  m.def(
      name,
      [make, name](py::args size, py::handle dtype, py::handle device, bool requires_grad) {
        Shape s = to_shape(size, name);
        TensorOptions o = to_options(dtype, device, false);
        Tensor t = nogil([&] { return make(s, o); });
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), "requires_grad"_a = false,
      doc);
}

// f(x, dtype=None, device=None, requires_grad=False) for zeros_like and friends: x's dtype and
// device unless given.
template <typename F>
void def_like(py::module_& m, const char* name, F make) {
  m.def(
      name,
      [make](const Tensor& x, py::handle dtype, py::handle device, bool requires_grad) {
        TensorOptions o = x.options();
        if (!dtype.is_none()) o.with_dtype(to_dtype(dtype));
        if (!device.is_none()) o.with_device(to_device(device));
        Tensor t = nogil([&] { return make(x.sizes(), o); });
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      "input"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
      "requires_grad"_a = false);
}

std::vector<Tensor> tensor_list(py::handle h, const char* what) {
  if (!py::isinstance<py::sequence>(h))
    throw py::type_error(std::string(what) + "(): expected a sequence of tensors");
  std::vector<Tensor> out;
  for (py::handle item : h) {
    if (!is_tensor(item))
      throw py::type_error(std::string(what) +
                           "(): expected a sequence of tensors, got an element of type " +
                           std::string(py::str(py::type::handle_of(item).attr("__name__"))));
    out.push_back(as_tensor(item));
  }
  return out;
}

}  // namespace

void bind_functions(py::module_& m) {
  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device, bool requires_grad) {
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = to_dtype(dtype);
        Device d = device.is_none() ? Device(kCPU, 0) : to_device(device);
        Tensor t = tensor_from_data(data, dt, d);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      "data"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
      "requires_grad"_a = false,
      "A new tensor holding a copy of data (nested lists, a number, a NumPy array or a tensor).");
  m.def(
      "as_tensor",
      [](py::handle data, py::handle dtype, py::handle device) -> Tensor {
        if (is_tensor(data)) {
          const Tensor& t = as_tensor(data);
          DType dt = dtype.is_none() ? t.dtype() : to_dtype(dtype);
          Device d = device.is_none() ? t.device() : to_device(device);
          return nogil([&] { return t.to(d, dt); });
        }
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = to_dtype(dtype);
        return tensor_from_data(data, dt, device.is_none() ? Device(kCPU, 0) : to_device(device));
      },
      "data"_a, "dtype"_a = py::none(), "device"_a = py::none());
  m.def("is_tensor", [](py::handle h) { return is_tensor(h); });
  m.def("numel", [](const Tensor& x) { return x.numel(); });

  def_sized(
      m, "zeros", [](const Shape& s, const TensorOptions& o) { return zeros(s, o); },
      "A tensor of zeros.");
  def_sized(
      m, "ones", [](const Shape& s, const TensorOptions& o) { return ones(s, o); },
      "A tensor of ones.");
  def_sized(
      m, "empty", [](const Shape& s, const TensorOptions& o) { return empty(s, o); },
      "A tensor of uninitialised memory.");
  def_sized(
      m, "rand", [](const Shape& s, const TensorOptions& o) { return rand(s, o); },
      "Uniform in [0, 1).");
  def_sized(
      m, "randn", [](const Shape& s, const TensorOptions& o) { return randn(s, o); },
      "Standard normal.");
  def_like(m, "zeros_like", [](const Shape& s, const TensorOptions& o) { return zeros(s, o); });
  def_like(m, "ones_like", [](const Shape& s, const TensorOptions& o) { return ones(s, o); });
  def_like(m, "empty_like", [](const Shape& s, const TensorOptions& o) { return empty(s, o); });
  def_like(m, "rand_like", [](const Shape& s, const TensorOptions& o) { return rand(s, o); });
  def_like(m, "randn_like", [](const Shape& s, const TensorOptions& o) { return randn(s, o); });
  m.def(
      "full",
      [](py::handle size, py::handle value, py::handle dtype, py::handle device,
         bool requires_grad) {
        Shape s = to_shape(size, "full");
        Scalar v = to_scalar(value, "full");
        TensorOptions o = to_options(dtype, device, false);
        if (dtype.is_none()) o.with_dtype(v.dtype());  // the dtype follows the value
        Tensor t = nogil([&] { return full(s, v, o); });
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      "size"_a, "fill_value"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
      "requires_grad"_a = false);
  m.def(
      "full_like",
      [](const Tensor& x, py::handle value, py::handle dtype, py::handle device) {
        TensorOptions o = x.options();
        if (!dtype.is_none()) o.with_dtype(to_dtype(dtype));
        if (!device.is_none()) o.with_device(to_device(device));
        Scalar v = to_scalar(value, "full_like");
        return nogil([&] { return full(x.sizes(), v, o); });
      },
      "input"_a, "fill_value"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none());
  m.def(
      "arange",
      [](py::args args, py::handle dtype, py::handle device, bool requires_grad) {
        if (args.empty() || args.size() > 3)
          throw py::type_error(
              "arange(): expected arange(end), arange(start, end) or "
              "arange(start, end, step)");
        Scalar start = 0, end, step = 1;
        if (args.size() == 1) {
          end = to_scalar(args[0], "arange");
        } else {
          start = to_scalar(args[0], "arange");
          end = to_scalar(args[1], "arange");
          if (args.size() == 3) step = to_scalar(args[2], "arange");
        }
        Tensor t;
        if (dtype.is_none()) {
          t = nogil([&] { return arange(start, end, step); });
          if (!device.is_none()) t = t.to(to_device(device));
        } else {
          TensorOptions o = to_options(dtype, device, false);
          t = nogil([&] { return arange(start, end, step, o); });
        }
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), "requires_grad"_a = false);
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, py::handle dtype, py::handle device) {
        TensorOptions o = to_options(dtype, device, false);
        return nogil([&] { return linspace(start, end, steps, o); });
      },
      "start"_a, "end"_a, "steps"_a, py::kw_only(), "dtype"_a = py::none(),
      "device"_a = py::none());
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> cols, py::handle dtype, py::handle device) {
        TensorOptions o = to_options(dtype, device, false);
        return nogil([&] { return eye(n, cols.value_or(-1), o); });
      },
      "n"_a, "m"_a = py::none(), py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none());
  m.def(
      "randint",
      [](py::args args, py::handle dtype, py::handle device) {
        // randint(high, size) or randint(low, high, size)
        if (args.size() != 2 && args.size() != 3)
          throw py::type_error(
              "randint(): expected randint(high, size) or randint(low, high, size)");
        int64_t low = args.size() == 3 ? args[0].cast<int64_t>() : 0;
        int64_t high = args[args.size() - 2].cast<int64_t>();
        Shape s = to_shape(py::handle(args[args.size() - 1]), "randint");
        TensorOptions o =
            to_options(dtype.is_none() ? py::handle(dtype_object(kInt64)) : dtype, device, false);
        return nogil([&] { return randint(low, high, s, o); });
      },
      py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none());
  m.def(
      "randperm",
      [](int64_t n, py::handle dtype, py::handle device) {
        TensorOptions o =
            to_options(dtype.is_none() ? py::handle(dtype_object(kInt64)) : dtype, device, false);
        return nogil([&] { return randperm(n, o); });
      },
      "n"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none());
  m.def(
      "bernoulli",
      [](const Tensor& like, double p) { return nogil([&] { return bernoulli(like, p); }); },
      "input"_a, "p"_a);

  m.def(
      "cat",
      [](py::handle tensors, int64_t dim) {
        std::vector<Tensor> ts = tensor_list(tensors, "cat");
        return nogil([&] { return cat(ts, dim); });
      },
      "tensors"_a, "dim"_a = 0);
  m.attr("concat") = m.attr("cat");
  m.def(
      "stack",
      [](py::handle tensors, int64_t dim) {
        std::vector<Tensor> ts = tensor_list(tensors, "stack");
        return nogil([&] { return stack(ts, dim); });
      },
      "tensors"_a, "dim"_a = 0);
  m.def(
      "tile",
      [](const Tensor& x, py::handle dims) {
        Shape d = to_shape(dims, "tile");
        return nogil([&] { return tile(x, d); });
      },
      "input"_a, "dims"_a);
  m.def(
      "where",
      [](const Tensor& cond, py::handle a, py::handle b) {
        auto operand = [&](py::handle h) {
          if (is_tensor(h)) return as_tensor(h);
          Scalar s = to_scalar(h, "where");
          return scalar_tensor(s, TensorOptions(s.dtype()).with_device(cond.device()));
        };
        Tensor ta = operand(a), tb = operand(b);
        return nogil([&] { return where(cond, ta, tb); });
      },
      "condition"_a, "input"_a, "other"_a);
}

}  // namespace ember::python
