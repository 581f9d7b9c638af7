// torch.tensor / as_tensor (data from Python values) and cat / stack / tile; the factories and the
// math functions are declared by signature (ops_factory.cpp, ops_math.cpp, ...).
#include "bind.h"
#include "ember/ops/tensor_index.h"

namespace ember::python {
namespace {

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
}

}  // namespace ember::python
