// ember.Tensor: metadata, conversions, views, math methods, operators and subscripts.
#include <pybind11/functional.h>

#include "bind.h"
#include "ember/core/autograd_meta.h"
#include "ember/ops/tensor_index.h"

namespace ember::python {
namespace {


// The elements of t as nested Python lists (tolist()).
py::object to_list(const Tensor& t) {
  Tensor c;
  {
    ReleaseGil no_gil;
    c = t.detach().to(Device(kCPU, 0)).contiguous();
  }
  // Elements read as T, each made a Python object by `box`, nested by the tensor's dims.
  auto convert = [&](auto tag, auto box) -> py::object {
    using T = typename decltype(tag)::type;
    std::vector<T> flat = c.tolist<T>();
    size_t pos = 0;
    std::function<py::object(int64_t)> build = [&](int64_t d) -> py::object {
      if (d == c.dim()) return box(flat[pos++]);
      py::list l;
      for (int64_t i = 0; i < c.size(d); ++i) l.append(build(d + 1));
      return l;
    };
    return build(0);
  };
  if (c.dtype() == kBool)
    return convert(std::type_identity<uint8_t>{}, [](uint8_t v) { return py::bool_(v != 0); });
  if (c.is_floating_point())
    return convert(std::type_identity<double>{}, [](double v) { return py::float_(v); });
  if (c.is_complex())
    return convert(std::type_identity<Complex<double>>{}, [](Complex<double> v) {
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(v.re, v.im));
    });
  return convert(std::type_identity<int64_t>{}, [](int64_t v) { return py::int_(v); });
}

Tensor to_call(const Tensor& t, const py::args& args, const py::kwargs& kwargs) {
  ToArgs a = to_args(args, kwargs);
  ReleaseGil no_gil;
  return t.to(a.device.value_or(t.device()), a.dtype.value_or(t.dtype()), a.non_blocking, a.copy);
}

// A Python subscript (x[0, 1:3, None, ..., idx, mask]) as ember's TensorIndex list.
TensorIndex to_index(py::handle h, Device device) {
  if (h.is_none()) return TensorIndex::none();
  if (h.ptr() == Py_Ellipsis) return TensorIndex::ellipsis();
  if (PyBool_Check(h.ptr())) return TensorIndex::boolean(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) return TensorIndex(h.cast<int64_t>());
  if (PySlice_Check(h.ptr())) {
    auto* s = reinterpret_cast<PySliceObject*>(h.ptr());
    auto bound = [](PyObject* o) -> std::optional<int64_t> {
      if (o == Py_None) return std::nullopt;
      return py::reinterpret_steal<py::object>(PyNumber_Index(o)).cast<int64_t>();
    };
    Slice sl{bound(s->start), bound(s->stop), 1};
    if (s->step != Py_None) sl.step = *bound(s->step);
    return TensorIndex(sl);
  }
  if (is_tensor(h)) return TensorIndex(as_tensor(h));
  if (py::hasattr(h, "__index__") && !py::isinstance<py::sequence>(h))
    return TensorIndex(py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr())).cast<int64_t>());
  if (py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h))
    return TensorIndex(tensor_from_data(h, std::nullopt, Device(kCPU, 0)));
  throw py::type_error(
      "only integers, slices (`:`), ellipsis (`...`), None and long or bool tensors are valid "
      "indices, got " +
      std::string(py::str(py::type::handle_of(h).attr("__name__"))));
}

// PyTorch's (and old NumPy's) rule: a short list that holds a slice, an Ellipsis, None, a tensor
// or a sequence is a tuple of indices (x[[slice(0, 3), 1]] is x[0:3, 1]); a list of ints alone is
// one index tensor.
bool sequence_is_tuple(py::handle h) {
  if (PyTuple_Check(h.ptr())) return true;
  if (is_tensor(h) || !PyList_Check(h.ptr())) return false;
  Py_ssize_t n = PyList_GET_SIZE(h.ptr());
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(h.ptr(), i);
    if (is_tensor(item) || PySequence_Check(item) || PySlice_Check(item) ||
        item == Py_Ellipsis || item == Py_None)
      return true;
  }
  return false;
}

std::vector<TensorIndex> to_indices(py::handle h, Device device) {
  std::vector<TensorIndex> out;
  if (sequence_is_tuple(h)) {
    for (py::handle item : h) out.push_back(to_index(item, device));
  } else {
    out.push_back(to_index(h, device));
  }
  return out;
}

Tensor reversed_dims(const Tensor& x) {
  Shape dims;
  for (int64_t d = x.dim() - 1; d >= 0; --d) dims.push_back(d);
  return x.permute(dims);
}

// The transpose of the last two dims (x.mT; x.mH and x.adjoint() conjugate it too); a 0-dim
// tensor is its own, as PyTorch's.
Tensor matrix_transpose(const Tensor& x, const char* name) {
  if (x.dim() == 0) return x.view_as(x);
  EMBER_CHECK(x.dim() >= 2, "tensor.", name, " is only supported on matrices or batches of "
              "matrices. Got ", x.dim(), "-D tensor.");
  return x.transpose(-2, -1);
}

// new_zeros and friends: self's dtype and device unless given.
TensorOptions like(const Tensor& t, py::handle dtype, py::handle device, bool requires_grad) {
  TensorOptions o = t.options();
  if (!dtype.is_none()) o.with_dtype(to_dtype(dtype));
  if (!device.is_none()) o.with_device(to_device(device));
  o.with_requires_grad(requires_grad);
  return o;
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<RemovableHandle>(m, "RemovableHandle").def("remove", &RemovableHandle::remove);
  py::class_<Node, std::shared_ptr<Node>>(m, "Node", "A function in the autograd graph.")
      .def("name", &Node::name)
      // ((node, input_nr), ...) for each input the node sends a gradient to, (None, 0) for one
      // that needs none, as PyTorch's.
      .def_property_readonly("next_functions",
                             [](const Node& n) {
                               py::tuple out(n.next_edges.size());
                               for (size_t i = 0; i < n.next_edges.size(); ++i) {
                                 const Edge& e = n.next_edges[i];
                                 out[i] = py::make_tuple(
                                     e.valid() ? py::cast(e.node) : py::none(), e.input_nr);
                               }
                               return out;
                             })
      .def("__repr__", [](const Node& n) { return "<" + n.name() + " object>"; });

  py::class_<Tensor> t(m, "Tensor", py::dynamic_attr(), "A multi-dimensional array on a device.");
  set_tensor_type(t);
  // x.float(), x.short(), x.cdouble(), ...: conversions named by the target dtype.
  struct Conversion {
    const char* name;
    DType dtype;
  };
  for (Conversion c : {Conversion{"float", kFloat32}, {"double", kFloat64}, {"half", kFloat16},
                       {"bfloat16", kBFloat16}, {"long", kInt64}, {"int", kInt32},
                       {"short", kInt16}, {"char", kInt8}, {"byte", kUInt8}, {"bool", kBool},
                       {"cfloat", kComplex64}, {"cdouble", kComplex128}, {"chalf", kComplex32}})
    t.def(
        c.name,
        [d = c.dtype](const Tensor& x, py::handle memory_format) {
          return nogil([&] { return x.to(d); });
        },
        "memory_format"_a = py::none());
  t.def(py::init<>())
      .def(py::init([](py::handle data) {
             if (is_tensor(data)) return Tensor(as_tensor(data).impl());  // shares, as Parameter
             return tensor_from_data(data, kFloat32, Device(kCPU, 0));
           }),
           "data"_a)
      // --- metadata ---
      .def_property_readonly("shape", [](const Tensor& x) { return to_size(x.sizes()); })
      .def(
          "size",
          [](const Tensor& x, py::handle dim) -> py::object {
            if (dim.is_none()) return to_size(x.sizes());
            return py::int_(x.size(dim.cast<int64_t>()));
          },
          "dim"_a = py::none())
      .def(
          "stride",
          [](const Tensor& x, py::handle dim) -> py::object {
            if (dim.is_none()) {
              py::tuple s(x.strides().size());
              for (size_t i = 0; i < x.strides().size(); ++i) s[i] = py::int_(x.strides()[i]);
              return s;
            }
            return py::int_(x.stride(dim.cast<int64_t>()));
          },
          "dim"_a = py::none())
      .def_property_readonly("dtype", [](const Tensor& x) { return dtype_object(x.dtype()); })
      // cpu:0 shows as `cpu`, as PyTorch's CPU tensors (the two compare equal).
      .def_property_readonly("device",
                             [](const Tensor& x) {
                               Device d = x.device();
                               return d.is_cpu() && d.index() == 0 ? Device(kCPU) : d;
                             })
      .def_property_readonly("is_cuda", &Tensor::is_cuda)
      .def_property_readonly("is_cpu", &Tensor::is_cpu)
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("itemsize", &Tensor::element_size)
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("storage_offset", &Tensor::storage_offset)
      .def("_storage_view",
           [](const Tensor& x, py::handle dtype) {
             // The whole storage under x as a 1-D tensor of dtype from its first byte (what
             // torch's TypedStorage and UntypedStorage show), outside autograd.
             DType t = to_dtype(dtype);
             auto n = static_cast<int64_t>(x.storage()->nbytes / itemsize(t));
             return Tensor(std::make_shared<TensorImpl>(x.storage(), Shape{n}, Shape{1}, 0, t,
                                                        x.device()));
           })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("get_device", &Tensor::get_device)
      .def("data_ptr", [](const Tensor& x) { return reinterpret_cast<uintptr_t>(x.data_ptr()); })
      .def("is_shared", &Tensor::is_shared)
      .def("is_pinned", &Tensor::is_pinned)
      .def("__repr__",
           [](const Tensor& x) {
             std::ostringstream os;
             os << x;
             return os.str();
           })
      .def("__len__",
           [](const Tensor& x) {
             if (x.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return x.size(0);
           })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      // --- autograd ---
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& x, bool on) { x.requires_grad_(on); })
      .def_property(
          "grad",
          [](const Tensor& x) -> py::object {
            if (!x.grad().defined()) return py::none();
            return py::cast(x.grad());
          },
          [](const Tensor& x, py::handle g) {
            if (!g.is_none() && !is_tensor(g))
              throw py::type_error("assigned grad expected to be a Tensor or None but got grad of "
                                   "type " + type_name(g));
            x.set_grad(g.is_none() ? Tensor() : as_tensor(g));
          })
      .def_property_readonly("grad_fn",
                             [](const Tensor& x) -> py::object {
                               if (!x.grad_fn()) return py::none();
                               return py::cast(x.grad_fn());
                             })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("_version", &Tensor::_version)
      .def_property_readonly("output_nr",
                             [](const Tensor& x) -> int64_t {
                               // Which output of grad_fn x is; a leaf's is 0 (and it may have
                               // no autograd state to ask).
                               return x.grad_fn() ? autograd_meta(x).output_nr : 0;
                             })
      .def_property(
          "data", [](const Tensor& x) { return x.detach(); },
          [](const Tensor& x, const Tensor& d) { x.set_data(d); })
      .def(
          "requires_grad_",
          [](py::object self, bool on) {
            self.cast<Tensor&>().requires_grad_(on);
            return self;
          },
          "requires_grad"_a = true)
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("detach", &Tensor::detach)
      .def("detach_",
           [](py::object self) {
             self.cast<Tensor&>().detach_();
             return self;
           })
      .def(
          "backward",
          [](const Tensor& x, py::handle gradient, py::handle retain_graph, bool create_graph) {
            Tensor g = gradient.is_none() ? Tensor() : as_tensor(gradient);
            bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
            ReleaseGil no_gil;
            x.backward(g, retain, create_graph);
          },
          "gradient"_a = py::none(), "retain_graph"_a = py::none(), "create_graph"_a = false)
      .def("register_hook",
           [](const Tensor& x, py::function fn) {
             // The hook runs on the thread backward runs on, which holds no GIL.
             auto hook = std::make_shared<py::function>(std::move(fn));
             return x.register_hook([hook](const Tensor& g) -> Tensor {
               py::gil_scoped_acquire gil;
               py::object r = (*hook)(g);
               return r.is_none() ? Tensor() : r.cast<Tensor>();
             });
           })
      .def("register_post_accumulate_grad_hook",
           [](py::object self, py::function fn) {
             // PyTorch 2.1's: runs with the leaf once its .grad holds the new gradient (an
             // optimizer step fused into backward). The hook gets this very Python object, as
             // programs key their optimizers by parameter; a weak reference, so that the hook,
             // which the tensor holds, does not keep it alive.
             const Tensor& x = self.cast<const Tensor&>();
             auto hook = std::make_shared<py::function>(std::move(fn));
             auto weak = std::make_shared<py::weakref>(self);
             return x.register_post_accumulate_grad_hook([hook, weak](const Tensor& leaf) {
               py::gil_scoped_acquire gil;
               py::object obj = (*weak)();
               (*hook)(obj.is_none() ? py::cast(leaf) : obj);
             });
           })
      // --- conversions and copies ---
      .def("to", &to_call)
      .def(
          "cuda",
          [](const Tensor& x, py::handle device, bool non_blocking) {
            int index = -1;
            if (!device.is_none()) {
              Device d = to_device(device);
              EMBER_CHECK(d.is_cuda(), "[cuda] expected a CUDA device, got ", d);
              index = d.index();
            }
            return nogil([&] { return x.cuda(index, non_blocking); });
          },
          "device"_a = py::none(), "non_blocking"_a = false)
      .def("cpu", [](const Tensor& x) { return nogil([&] { return x.cpu(); }); })
      .def("type_as",
           [](const Tensor& x, const Tensor& o) { return nogil([&] { return x.to(o.dtype()); }); })
      .def("clone", [](const Tensor& x) { return nogil([&] { return x.clone(); }); })
      .def("contiguous", [](const Tensor& x) { return nogil([&] { return x.contiguous(); }); })
      .def(
          "copy_",
          [](py::object self, const Tensor& src, bool non_blocking) {
            return inplace(self, [&](Tensor& x) { x.copy_(src, non_blocking); });
          },
          "src"_a, "non_blocking"_a = false)
      .def("fill_",
           [](py::object self, py::handle v) {
             Scalar s = to_scalar(v, "fill_");
             return inplace(self, [&](Tensor& x) { x.fill_(s); });
           })
      .def("zero_", [](py::object self) { return inplace(self, [](Tensor& x) { x.zero_(); }); })
      .def("item",
           [](const Tensor& x) {
             Scalar s;
             {
               ReleaseGil no_gil;
               s = x.item();
             }
             return scalar_to_py(s);
           })
      .def("tolist", &to_list)
      .def("__bool__",
           [](const Tensor& x) {
             EMBER_CHECK(x.numel() == 1, "[__bool__] Boolean value of Tensor with ", x.numel(),
                         " values is ambiguous");
             ReleaseGil no_gil;
             return x.item().to<bool>();
           })
      .def("__float__",
           [](const Tensor& x) {
             ReleaseGil no_gil;
             return x.item().to_double();
           })
      .def("__int__",
           [](const Tensor& x) {
             ReleaseGil no_gil;
             return x.item().to_int();
           })
      .def("__index__",
           [](const Tensor& x) {
             if (!is_integral(x.dtype(), true) || x.numel() != 1)
               throw py::type_error(
                   "only integer tensors of a single element can be converted to an index");
             ReleaseGil no_gil;
             return x.item().to_int();
           })
      .def("pin_memory", [](const Tensor& x) { return nogil([&] { return x.pin_memory(); }); })
      .def("share_memory_",
           [](py::object self) { return inplace(self, [](Tensor& x) { x.share_memory_(); }); })
      .def("record_stream",
           [](const Tensor& x, py::handle stream) {
             x.record_stream(stream.attr("cuda_stream").cast<uintptr_t>());
           })
      // --- new tensors like this one ---
      .def(
          "new_tensor",
          [](const Tensor& x, py::handle data, py::handle dtype, py::handle device, bool rg) {
            TensorOptions o = like(x, dtype, device, rg);
            Tensor r = tensor_from_data(data, o.dtype, o.device);
            if (rg) r.requires_grad_(true);
            return r;
          },
          "data"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
          "requires_grad"_a = false)
      .def_property_readonly("T", &reversed_dims)
      .def_property_readonly("mT", [](const Tensor& x) { return matrix_transpose(x, "mT"); })
      .def_property_readonly("H", [](const Tensor& x) { return conj(reversed_dims(x)); })
      .def_property_readonly("mH",
                             [](const Tensor& x) { return conj(matrix_transpose(x, "mH")); })
      .def("adjoint", [](const Tensor& x) { return conj(matrix_transpose(x, "adjoint()")); })
      // The parts of a complex tensor, as views; assigning writes into them (x.real = y).
      .def_property(
          "real", [](const Tensor& x) { return real(x); },
          [](Tensor& x, py::handle v) {
            Tensor r = real(x);
            if (is_tensor(v)) r.copy_(as_tensor(v)); else r.fill_(to_scalar(v, "real"));
          })
      .def_property(
          "imag", [](const Tensor& x) { return imag(x); },
          [](Tensor& x, py::handle v) {
            Tensor i = imag(x);
            if (is_tensor(v)) i.copy_(as_tensor(v)); else i.fill_(to_scalar(v, "imag"));
          })
      .def("__iter__",
           [](const Tensor& x) {
             if (x.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
             return py::iter(py::cast(x.unbind(0)));
           })
      .def("__getitem__",
           [](const Tensor& x, py::handle idx) {
             if (PyLong_Check(idx.ptr()) && !PyBool_Check(idx.ptr())) {
               int64_t i = idx.cast<int64_t>();  // the common x[i]: a select
               return nogil([&] { return x.select(0, i); });
             }
             std::vector<TensorIndex> indices = to_indices(idx, x.device());
             return nogil([&] { return index(x, indices); });
           })
      .def("__setitem__", [](Tensor& x, py::handle idx, py::handle value) {
        std::vector<TensorIndex> indices = to_indices(idx, x.device());
        if (is_tensor(value)) {
          const Tensor& v = as_tensor(value);
          ReleaseGil no_gil;
          index_put_(x, indices, v);
        } else if (std::optional<Scalar> s = as_scalar(value)) {
          ReleaseGil no_gil;
          index_put_(x, indices, *s);
        } else {
          Tensor v = tensor_from_data(value, x.dtype(), x.device());
          ReleaseGil no_gil;
          index_put_(x, indices, v);
        }
      });

  bind_tensor_math(t);
}

}  // namespace ember::python
