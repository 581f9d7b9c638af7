// What every file of the binding shares: pybind11, ember's public API, one bind_* function per
// part of the `ember` package, and the conversions from Python values. The binding converts and
// names; every computation is ember's C++. Calls that compute, copy, wait or communicate release
// the GIL (Note [The GIL]).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/profiler_events.h"
#include "ember/ember.h"

namespace py = pybind11;
using namespace pybind11::literals;

// Note [The GIL]: every binding that runs ember code releases the GIL for it (as PyTorch's
// bindings do), so Python threads - a DataLoader's, DataParallel's replicas - run ember work in
// parallel, and ember threads that call back into Python (a Python module's forward in a
// replica, a Python Dataset, a tensor hook) can take it. Whatever C++ calls into Python takes the
// GIL first (py::gil_scoped_acquire) and is reached only with it released by its caller.

namespace ember::python {

void bind_device(py::module_& m);
void bind_tensor(py::module_& m);
void bind_functions(py::module_& m);
void bind_autograd(py::module_& m);
void bind_nn(py::module_& m);
void bind_optim(py::module_& m);
void bind_data(py::module_& m);
void bind_io(py::module_& m);
void bind_cuda(py::module_& m);
void bind_parallel(py::module_& m);
void bind_distributed(py::module_& m);
/// FullyShardedDataParallel, in ember._C._distributed (python/src/fsdp.cpp).
void bind_fsdp(py::module_& distributed);
void bind_multiprocessing(py::module_& m);
void bind_interop(py::module_& m);
void bind_amp(py::module_& m);
void bind_profiler(py::module_& m);
void bind_compile(py::module_& m);

class OpTable;
/// The ops declared by signature (op_table.h), one function per part: ember._C._ops gets the
/// functions, ember.Tensor the methods.
void bind_ops(py::module_& m);
void def_reduce_ops(OpTable& t);
void def_math_ops(OpTable& t);
void def_factory_ops(OpTable& t);
void def_nn_ops(OpTable& t);
void def_nn_top_level(OpTable& t);
/// The functions of ember._C._F bound directly (too many parameters for a signature).
void def_nn_functions(py::module_& functional);
void def_shape_ops(OpTable& t);
void def_special_top_level(OpTable& t);
void def_special_ops(OpTable& t);
void def_linalg_top_level(OpTable& t);
void def_linalg_ops(OpTable& t);
void def_fft_ops(OpTable& t);
void def_spectral_top_level(OpTable& t);
void bind_generator(py::module_& m);

// --- calling ember ---
/// The Python frames of this thread, innermost first ("file.py(12): forward"); none unless it
/// holds the GIL.
std::vector<std::string> python_stack();

/// Releases the GIL for its scope (pybind11's gil_scoped_release); while a profile records stacks
/// on this thread, it first keeps the caller's Python frames for the ops that run meanwhile.
class ReleaseGil {
 public:
  ReleaseGil() {
    if (profiler::wants_stack()) frames_.emplace(python_stack());
    release_.emplace();
  }

 private:
  std::optional<profiler::CallerStack> frames_;    // destroyed after the GIL is back
  std::optional<py::gil_scoped_release> release_;  // destroyed first
};

/// Runs fn (a computation returning a tensor) without the GIL.
template <typename F>
Tensor nogil(F&& fn) {
  ReleaseGil no_gil;
  return fn();
}
/// Runs fn (a computation returning anything) without the GIL.
template <typename F>
auto nogil_any(F&& fn) {
  ReleaseGil no_gil;
  return fn();
}
/// An in-place method: runs fn on self's tensor without the GIL and returns self itself, as
/// PyTorch does (x.add_(y) is x).
template <typename F>
py::object inplace(py::object self, F&& fn);
/// The tensor methods of elementwise math and the operators (tensor_math.cpp).
void bind_tensor_math(py::class_<Tensor>& t);

// --- conversions (convert.cpp) ---
/// Python bool, int, float or complex (and NumPy scalars) as a Scalar; nullopt for anything else.
std::optional<Scalar> as_scalar(py::handle h);
Scalar to_scalar(py::handle h, const char* what);
/// A Scalar as a Python bool, int, float or complex.
py::object scalar_to_py(const Scalar& s);
/// A tensor argument, or a number made into a 0-dim tensor (like PyTorch's wrapped numbers).
bool is_tensor(py::handle h);
/// The Python type name of h's object ("float", "Tensor"), for error messages.
std::string type_name(py::handle h);
const Tensor& as_tensor(py::handle h);
/// Records ember.Tensor's type object for is_tensor (bind_tensor calls it once).
void set_tensor_type(py::handle type);
/// Sizes given as f(2, 3), f((2, 3)) or f([2, 3]).
Shape to_shape(const py::args& args, const char* what);
Shape to_shape(py::handle h, const char* what);
/// A dim argument: None -> all dims (empty), an int or a tuple/list of ints.
Dims to_dims(py::handle h, const char* what);
/// "cuda:1", ember.device, or an int (a CUDA index, as PyTorch reads one).
Device to_device(py::handle h);
DType to_dtype(py::handle h);
/// The one Python object of each dtype (device.cpp), so that `x.dtype is ember.float32`.
py::object dtype_object(DType t);
/// Factory keywords: dtype=, device=, requires_grad=.
TensorOptions to_options(py::handle dtype, py::handle device, bool requires_grad);
/// torch.tensor(data): nested lists or tuples of numbers, a NumPy array, a number or a tensor
/// (copied); the dtype inferred from the data unless given.
Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device);
/// kernel_size=3 or (3, 5), as the pooling and convolution arguments take it.
Pair to_pair(py::handle h, const char* what);
/// The arguments of Tensor.to and Module.to, as PyTorch takes them: to(device=None, dtype=None,
/// non_blocking=False, copy=False), to(dtype, ...), to(tensor, ...) (its device and dtype),
/// positionally or by keyword.
struct ToArgs {
  std::optional<Device> device;
  std::optional<DType> dtype;
  bool non_blocking = false, copy = false;
};
ToArgs to_args(const py::args& args, const py::kwargs& kwargs);
/// Sizes as a Python tuple of ember.Size.
py::object to_size(const Shape& s);

/// Objects made in Python that the binding hands out (ember.Size, ember.nn.Parameter, the types
/// of max(dim)'s result): ember/__init__.py registers each once, when ember is imported. A
/// function-local static that imported them on first use could deadlock: a thread running its
/// initialiser releases the GIL inside the import, and another thread holding the GIL waits on
/// the static's guard (found with DataLoader workers calling a Python dataset).
py::handle python_object(const char* name);

// --- modules (nn.cpp) ---
/// The module behind a Python object, as a shared_ptr that keeps the Python object alive (and
/// with it a Python subclass's forward and attributes) while C++ holds the module.
std::shared_ptr<nn::Module> module_ptr(py::handle h);
/// The Python object of a module (the existing one when the module was made in Python).
py::object module_object(const std::shared_ptr<nn::Module>& m);
/// Whether a module object is one of ember's C++ layers as such (not a Python subclass): its
/// forward(x) needs no Python.
bool is_native(py::handle module);
/// The tensors in a forward's output (a tensor, or tuples, lists and dicts of them): what DDP's
/// and FSDP's post_forward look at.
void collect_tensors(py::handle h, std::vector<Tensor>& out);

/// `with model.no_sync():` for a wrapper that has a NoSyncGuard (DDP, FSDP): the context holds
/// the guard while the block runs. def_no_sync binds the context class (as `context_name`) and
/// the wrapper's no_sync method.
template <typename Wrapper>
struct NoSyncContext {
  std::shared_ptr<Wrapper> wrapper;
  std::optional<typename Wrapper::NoSyncGuard> guard;
};
template <typename Wrapper, typename Class>
void def_no_sync(py::module_& m, const char* context_name, Class& wrapper_class) {
  using Context = NoSyncContext<Wrapper>;
  py::class_<Context>(m, context_name)
      .def("__enter__", [](Context& c) { c.guard.emplace(*c.wrapper); })
      .def("__exit__", [](Context& c, py::args) {
        c.guard.reset();
        return false;
      });
  wrapper_class.def("no_sync",
                    [](const std::shared_ptr<Wrapper>& w) { return Context{w, std::nullopt}; });
}

template <typename F>
py::object inplace(py::object self, F&& fn) {
  auto& t = const_cast<Tensor&>(as_tensor(self));
  {
    ReleaseGil no_gil;
    fn(t);
  }
  return self;
}

}  // namespace ember::python
