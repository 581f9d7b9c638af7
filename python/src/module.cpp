// The extension module ember._C: each part of the package binds itself; ember's errors become
// the Python exceptions PyTorch raises for the same mistakes.
#include <pybind11/numpy.h>

#include <map>

#include "bind.h"

namespace ember::python {
namespace {

std::map<std::string, py::object*>& python_objects() {
  static auto* objects = new std::map<std::string, py::object*>();  // made at import, never freed
  return *objects;
}

void translate_errors(py::module_& m) {
  // ember.cuda.OutOfMemoryError is a RuntimeError, as torch.cuda.OutOfMemoryError.
  static auto* oom = new py::exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oom->ptr(), e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace

py::handle python_object(const char* name) {
  auto it = python_objects().find(name);
  if (it == python_objects().end())
    throw std::runtime_error(std::string("ember: ") + name + " was not registered (import ember)");
  return *it->second;
}

}  // namespace ember::python

PYBIND11_MODULE(_C, m) {
  using namespace ember::python;
  m.doc() = "ember's C++ core; import ember, not this module";
  translate_errors(m);
  bind_device(m);
  bind_tensor(m);
  bind_functions(m);
  bind_autograd(m);
  bind_nn(m);
  bind_optim(m);
  bind_data(m);
  bind_io(m);
  bind_cuda(m);
  bind_parallel(m);
  bind_distributed(m);
  bind_multiprocessing(m);
  bind_interop(m);
  bind_amp(m);
  bind_profiler(m);
  bind_compile(m);
  bind_ops(m);
  m.def("_register", [](const std::string& name, py::object obj) {
    py::object*& slot = python_objects()[name];
    delete slot;
    slot = new py::object(std::move(obj));
  });
  // NumPy's C API is looked up once, here, under the GIL (see python_object for why not later).
  try {
    (void)py::detail::npy_api::get();
  } catch (py::error_already_set&) {
    // Without NumPy, only the NumPy conversions fail (with NumPy's import error).
  }
  m.attr("__version__") = "0.1.0";
#ifdef EMBER_WITH_CUDA
  m.attr("_cuda_built") = true;
#else
  m.attr("_cuda_built") = false;
#endif
}
