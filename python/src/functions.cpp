// torch.tensor / as_tensor (data from Python values) and cat / stack / tile; the factories and the
// math functions are declared by signature (ops_factory.cpp, ops_math.cpp, ...).
#include "bind.h"
#include "ember/ops/tensor_index.h"

namespace ember::python {
namespace {

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
}

}  // namespace ember::python
