// ember.Tensor: metadata, conversions, views, math methods, operators and subscripts.
#include <pybind11/functional.h>

#include "bind.h"
#include "ember/ops/tensor_index.h"

namespace ember::python {
namespace {

py::object scalar_to_py(const Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to<bool>());
  if (s.is_integral()) return py::int_(s.to_int());
  return py::float_(s.to_double());
}

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// A method returning a new tensor: runs `fn` without the GIL.
template <typename F>
Tensor nogil(F&& fn) {
  py::gil_scoped_release no_gil;
  return fn();
}

// An in-place method: runs `fn` on self's tensor without the GIL and returns self itself, as
// PyTorch does (x.add_(y) is x).
template <typename F>
py::object inplace(py::object self, F&& fn) {
  Tensor& t = self.cast<Tensor&>();
  {
    py::gil_scoped_release no_gil;
    fn(t);
  }
  return self;
}

// a (op) b for b a tensor or a number; NotImplemented otherwise, so Python tries b's reflection.
template <typename TF, typename SF>
py::object binary(const Tensor& a, py::handle b, TF tensor_fn, SF scalar_fn) {
  if (is_tensor(b)) {
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return tensor_fn(a, tb); }));
  }
  if (std::optional<Scalar> s = as_scalar(b))
    return py::cast(nogil([&] { return scalar_fn(a, *s); }));
  return not_implemented();
}

template <typename TF, typename SF>
py::object binary_inplace(py::object self, py::handle b, TF tensor_fn, SF scalar_fn) {
  if (is_tensor(b)) {
    const Tensor& tb = as_tensor(b);
    return inplace(self, [&](Tensor& t) { tensor_fn(t, tb); });
  }
  if (std::optional<Scalar> s = as_scalar(b))
    return inplace(self, [&](Tensor& t) { scalar_fn(t, *s); });
  return not_implemented();
}

// The elements of t as nested Python lists (tolist()).
py::object to_list(const Tensor& t) {
  Tensor c;
  {
    py::gil_scoped_release no_gil;
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
  return convert(std::type_identity<int64_t>{}, [](int64_t v) { return py::int_(v); });
}

// Tensor.to's arguments, as PyTorch takes them: to(device=None, dtype=None, non_blocking=False,
// copy=False), to(dtype, ...), to(tensor, ...), positionally or by keyword.
Tensor to_call(const Tensor& t, const py::args& args, const py::kwargs& kwargs) {
  std::optional<Device> device;
  std::optional<DType> dtype;
  bool non_blocking = false, copy = false;
  int flags = 0;
  for (py::handle a : args) {
    if (py::isinstance<DType>(a)) {
      dtype = a.cast<DType>();
    } else if (is_tensor(a)) {
      device = as_tensor(a).device();
      dtype = as_tensor(a).dtype();
    } else if (PyBool_Check(a.ptr())) {
      (flags++ == 0 ? non_blocking : copy) = a.cast<bool>();
    } else if (a.is_none()) {
    } else {
      device = to_device(a);
    }
  }
  for (auto [k, v] : kwargs) {
    std::string key = py::str(k);
    if (key == "device") {
      if (!v.is_none()) device = to_device(v);
    } else if (key == "dtype") {
      if (!v.is_none()) dtype = to_dtype(v);
    } else if (key == "non_blocking") {
      non_blocking = v.cast<bool>();
    } else if (key == "copy") {
      copy = v.cast<bool>();
    } else if (key == "memory_format") {
    } else {
      throw py::type_error("to() got an unexpected keyword argument '" + key + "'");
    }
  }
  py::gil_scoped_release no_gil;
  return t.to(device.value_or(t.device()), dtype.value_or(t.dtype()), non_blocking, copy);
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

std::vector<TensorIndex> to_indices(py::handle h, Device device) {
  std::vector<TensorIndex> out;
  if (PyTuple_Check(h.ptr())) {
    for (py::handle item : h) out.push_back(to_index(item, device));
  } else {
    out.push_back(to_index(h, device));
  }
  return out;
}

// sum/mean/... take dim=None (all), an int or a tuple.
Dims dims_arg(py::handle dim) { return to_dims(dim, "dim"); }

py::object max_min(const Tensor& t, py::handle dim, bool keepdim, bool is_max) {
  static auto* max_type = new py::object(
      py::module_::import("collections").attr("namedtuple")("max", "values indices"));
  static auto* min_type = new py::object(
      py::module_::import("collections").attr("namedtuple")("min", "values indices"));
  if (dim.is_none()) return py::cast(nogil([&] { return is_max ? t.max() : t.min(); }));
  if (is_tensor(dim)) {  // x.max(other): the elementwise maximum
    const Tensor& o = as_tensor(dim);
    return py::cast(nogil([&] { return is_max ? maximum(t, o) : minimum(t, o); }));
  }
  int64_t d = dim.cast<int64_t>();
  std::tuple<Tensor, Tensor> r;
  {
    py::gil_scoped_release no_gil;
    r = is_max ? t.max(d, keepdim) : t.min(d, keepdim);
  }
  return (is_max ? *max_type : *min_type)(std::get<0>(r), std::get<1>(r));
}

std::optional<DType> opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
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
      .def("__repr__",
           [](const Node& n) { return "<" + n.name() + " object>"; });

  py::class_<Tensor> t(m, "Tensor", py::dynamic_attr(), "A multi-dimensional array on a device.");
  t.def(py::init<>())
      .def(py::init([](py::handle data) {
             if (is_tensor(data)) return Tensor(as_tensor(data).impl());  // shares, as Parameter
             return tensor_from_data(data, kFloat32, Device(kCPU, 0));
           }),
           "data"_a)
      // --- metadata ---
      .def_property_readonly("shape", [](const Tensor& x) { return to_size(x.sizes()); })
      .def("size",
           [](const Tensor& x, py::handle dim) -> py::object {
             if (dim.is_none()) return to_size(x.sizes());
             return py::int_(x.size(dim.cast<int64_t>()));
           },
           "dim"_a = py::none())
      .def("stride",
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
      .def_property(
          "requires_grad", &Tensor::requires_grad,
          [](Tensor& x, bool on) { x.requires_grad_(on); })
      .def_property(
          "grad",
          [](const Tensor& x) -> py::object {
            if (!x.grad().defined()) return py::none();
            return py::cast(x.grad());
          },
          [](const Tensor& x, py::handle g) {
            x.set_grad(g.is_none() ? Tensor() : as_tensor(g));
          })
      .def_property_readonly("grad_fn",
                             [](const Tensor& x) -> py::object {
                               if (!x.grad_fn()) return py::none();
                               return py::cast(x.grad_fn());
                             })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property(
          "data", [](const Tensor& x) { return x.detach(); },
          [](const Tensor& x, const Tensor& d) { x.set_data(d); })
      .def("requires_grad_",
           [](py::object self, bool on) {
             self.cast<Tensor&>().requires_grad_(on);
             return self;
           },
           "requires_grad"_a = true)
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("detach", &Tensor::detach)
      .def("detach_", [](py::object self) {
        self.cast<Tensor&>().detach_();
        return self;
      })
      .def("backward",
           [](const Tensor& x, py::handle gradient, py::handle retain_graph, bool create_graph) {
             Tensor g = gradient.is_none() ? Tensor() : as_tensor(gradient);
             bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
             py::gil_scoped_release no_gil;
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
      // --- conversions and copies ---
      .def("to", &to_call)
      .def("cuda",
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
      .def("float", [](const Tensor& x) { return nogil([&] { return x.to(kFloat32); }); })
      .def("double", [](const Tensor& x) { return nogil([&] { return x.to(kFloat64); }); })
      .def("half", [](const Tensor& x) { return nogil([&] { return x.to(kFloat16); }); })
      .def("bfloat16", [](const Tensor& x) { return nogil([&] { return x.to(kBFloat16); }); })
      .def("long", [](const Tensor& x) { return nogil([&] { return x.to(kInt64); }); })
      .def("int", [](const Tensor& x) { return nogil([&] { return x.to(kInt32); }); })
      .def("byte", [](const Tensor& x) { return nogil([&] { return x.to(kUInt8); }); })
      .def("bool", [](const Tensor& x) { return nogil([&] { return x.to(kBool); }); })
      .def("type_as",
           [](const Tensor& x, const Tensor& o) { return nogil([&] { return x.to(o.dtype()); }); })
      .def("clone", [](const Tensor& x) { return nogil([&] { return x.clone(); }); })
      .def("contiguous", [](const Tensor& x) { return nogil([&] { return x.contiguous(); }); })
      .def("copy_",
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
               py::gil_scoped_release no_gil;
               s = x.item();
             }
             return scalar_to_py(s);
           })
      .def("tolist", &to_list)
      .def("__bool__",
           [](const Tensor& x) {
             EMBER_CHECK(x.numel() == 1, "[__bool__] Boolean value of Tensor with ", x.numel(),
                         " values is ambiguous");
             py::gil_scoped_release no_gil;
             return x.item().to<bool>();
           })
      .def("__float__",
           [](const Tensor& x) {
             py::gil_scoped_release no_gil;
             return x.item().to_double();
           })
      .def("__int__",
           [](const Tensor& x) {
             py::gil_scoped_release no_gil;
             return x.item().to_int();
           })
      .def("__index__",
           [](const Tensor& x) {
             if (!is_integral(x.dtype(), true) || x.numel() != 1)
               throw py::type_error(
                   "only integer tensors of a single element can be converted to an index");
             py::gil_scoped_release no_gil;
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
      .def("new_zeros",
           [](const Tensor& x, py::handle size, py::handle dtype, py::handle device, bool rg) {
             TensorOptions o = like(x, dtype, device, rg);
             Shape s = to_shape(size, "new_zeros");
             return nogil([&] { return zeros(s, o); });
           },
           "size"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
           "requires_grad"_a = false)
      .def("new_ones",
           [](const Tensor& x, py::handle size, py::handle dtype, py::handle device, bool rg) {
             TensorOptions o = like(x, dtype, device, rg);
             Shape s = to_shape(size, "new_ones");
             return nogil([&] { return ones(s, o); });
           },
           "size"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
           "requires_grad"_a = false)
      .def("new_empty",
           [](const Tensor& x, py::handle size, py::handle dtype, py::handle device, bool rg) {
             TensorOptions o = like(x, dtype, device, rg);
             Shape s = to_shape(size, "new_empty");
             return nogil([&] { return empty(s, o); });
           },
           "size"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
           "requires_grad"_a = false)
      .def("new_full",
           [](const Tensor& x, py::handle size, py::handle value, py::handle dtype,
              py::handle device, bool rg) {
             TensorOptions o = like(x, dtype, device, rg);
             Shape s = to_shape(size, "new_full");
             Scalar v = to_scalar(value, "new_full");
             return nogil([&] { return full(s, v, o); });
           },
           "size"_a, "fill_value"_a, py::kw_only(), "dtype"_a = py::none(),
           "device"_a = py::none(), "requires_grad"_a = false)
      .def("new_tensor",
           [](const Tensor& x, py::handle data, py::handle dtype, py::handle device, bool rg) {
             TensorOptions o = like(x, dtype, device, rg);
             Tensor r = tensor_from_data(data, o.dtype, o.device);
             if (rg) r.requires_grad_(true);
             return r;
           },
           "data"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
           "requires_grad"_a = false)
      // --- views ---
      .def("view",
           [](const Tensor& x, py::args shape) {
             if (shape.size() == 1 && py::isinstance<DType>(shape[0]))
               throw py::type_error("view(dtype) is not supported; use .to(dtype)");
             Shape s = to_shape(shape, "view");
             return nogil([&] { return x.view(s); });
           })
      .def("view_as", &Tensor::view_as)
      .def("reshape",
           [](const Tensor& x, py::args shape) {
             Shape s = to_shape(shape, "reshape");
             return nogil([&] { return x.reshape(s); });
           })
      .def("reshape_as", [](const Tensor& x, const Tensor& o) {
        return nogil([&] { return x.reshape_as(o); });
      })
      .def("transpose", &Tensor::transpose, "dim0"_a, "dim1"_a)
      .def("t", &Tensor::t)
      .def_property_readonly("T",
                             [](const Tensor& x) {
                               Shape dims;
                               for (int64_t d = x.dim() - 1; d >= 0; --d) dims.push_back(d);
                               return x.permute(dims);
                             })
      .def("permute",
           [](const Tensor& x, py::args dims) { return x.permute(to_shape(dims, "permute")); })
      .def("narrow", &Tensor::narrow, "dim"_a, "start"_a, "length"_a)
      .def("select", &Tensor::select, "dim"_a, "index"_a)
      .def("squeeze",
           [](const Tensor& x, py::handle dim) {
             return dim.is_none() ? x.squeeze() : x.squeeze(dim.cast<int64_t>());
           },
           "dim"_a = py::none())
      .def("unsqueeze", &Tensor::unsqueeze, "dim"_a)
      .def("expand",
           [](const Tensor& x, py::args sizes) { return x.expand(to_shape(sizes, "expand")); })
      .def("expand_as", &Tensor::expand_as)
      .def("flatten", &Tensor::flatten, "start_dim"_a = 0, "end_dim"_a = -1)
      .def("unflatten",
           [](const Tensor& x, int64_t dim, py::handle sizes) {
             return x.unflatten(dim, to_shape(sizes, "unflatten"));
           },
           "dim"_a, "sizes"_a)
      .def("split",
           [](const Tensor& x, py::handle size, int64_t dim) {
             if (PyLong_Check(size.ptr())) return x.split(size.cast<int64_t>(), dim);
             return x.split(to_shape(size, "split"), dim);
           },
           "split_size_or_sections"_a, "dim"_a = 0)
      .def("chunk", &Tensor::chunk, "chunks"_a, "dim"_a = 0)
      .def("unbind", &Tensor::unbind, "dim"_a = 0)
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
      .def("__setitem__",
           [](Tensor& x, py::handle idx, py::handle value) {
             std::vector<TensorIndex> indices = to_indices(idx, x.device());
             if (is_tensor(value)) {
               const Tensor& v = as_tensor(value);
               py::gil_scoped_release no_gil;
               index_put_(x, indices, v);
             } else if (std::optional<Scalar> s = as_scalar(value)) {
               py::gil_scoped_release no_gil;
               index_put_(x, indices, *s);
             } else {
               Tensor v = tensor_from_data(value, x.dtype(), x.device());
               py::gil_scoped_release no_gil;
               index_put_(x, indices, v);
             }
           })
      // --- reductions ---
      .def("sum",
           [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
             Dims d = dims_arg(dim);
             std::optional<DType> dt = opt_dtype(dtype);
             return nogil([&] { return dim.is_none() ? x.sum(dt) : x.sum(d, keepdim, dt); });
           },
           "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none())
      .def("mean",
           [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
             Dims d = dims_arg(dim);
             std::optional<DType> dt = opt_dtype(dtype);
             return nogil([&] {
               Tensor in = dt ? x.to(*dt) : x;
               return dim.is_none() ? in.mean() : in.mean(d, keepdim);
             });
           },
           "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none())
      .def("prod",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             return nogil([&] {
               return dim.is_none() ? x.prod() : x.prod(dim.cast<int64_t>(), keepdim);
             });
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("max",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             return max_min(x, dim, keepdim, true);
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("min",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             return max_min(x, dim, keepdim, false);
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("amax",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             Dims d = dims_arg(dim);
             return nogil([&] { return x.amax(d, keepdim); });
           },
           "dim"_a = py::tuple(), "keepdim"_a = false)
      .def("amin",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             Dims d = dims_arg(dim);
             return nogil([&] { return x.amin(d, keepdim); });
           },
           "dim"_a = py::tuple(), "keepdim"_a = false)
      .def("argmax",
           [](const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
             return nogil([&] { return x.argmax(dim, keepdim); });
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("argmin",
           [](const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
             return nogil([&] { return x.argmin(dim, keepdim); });
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("var",
           [](const Tensor& x, py::handle dim, bool unbiased, bool keepdim) {
             Dims d = dims_arg(dim);
             return nogil([&] { return x.var(d, unbiased, keepdim); });
           },
           "dim"_a = py::none(), "unbiased"_a = true, "keepdim"_a = false)
      .def("std",
           [](const Tensor& x, py::handle dim, bool unbiased, bool keepdim) {
             Dims d = dims_arg(dim);
             return nogil([&] { return x.std(d, unbiased, keepdim); });
           },
           "dim"_a = py::none(), "unbiased"_a = true, "keepdim"_a = false)
      .def("all",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             return nogil([&] {
               return dim.is_none() ? all(x) : all(x, dim.cast<int64_t>(), keepdim);
             });
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("any",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             return nogil([&] {
               return dim.is_none() ? any(x) : any(x, dim.cast<int64_t>(), keepdim);
             });
           },
           "dim"_a = py::none(), "keepdim"_a = false)
      .def("norm",
           [](const Tensor& x, py::handle p) {
             Scalar s = to_scalar(p, "norm");
             return nogil([&] { return x.norm(s); });
           },
           "p"_a = 2)
      .def("logsumexp",
           [](const Tensor& x, py::handle dim, bool keepdim) {
             Dims d = dims_arg(dim);
             return nogil([&] { return x.logsumexp(d, keepdim); });
           },
           "dim"_a, "keepdim"_a = false)
      // --- linear algebra, softmax, indexing ---
      .def("matmul", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.matmul(b); }); })
      .def("mm", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.mm(b); }); })
      .def("bmm", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.bmm(b); }); })
      .def("softmax",
           [](const Tensor& x, int64_t dim) { return nogil([&] { return x.softmax(dim); }); },
           "dim"_a)
      .def("log_softmax",
           [](const Tensor& x, int64_t dim) { return nogil([&] { return x.log_softmax(dim); }); },
           "dim"_a)
      .def("gather",
           [](const Tensor& x, int64_t dim, const Tensor& i) {
             return nogil([&] { return x.gather(dim, i); });
           },
           "dim"_a, "index"_a)
      .def("scatter",
           [](const Tensor& x, int64_t dim, const Tensor& i, const Tensor& src) {
             return nogil([&] { return x.scatter(dim, i, src); });
           },
           "dim"_a, "index"_a, "src"_a)
      .def("scatter_",
           [](py::object self, int64_t dim, const Tensor& i, const Tensor& src) {
             return inplace(self, [&](Tensor& x) { x.scatter_(dim, i, src); });
           },
           "dim"_a, "index"_a, "src"_a)
      .def("scatter_add",
           [](const Tensor& x, int64_t dim, const Tensor& i, const Tensor& src) {
             return nogil([&] { return x.scatter_add(dim, i, src); });
           },
           "dim"_a, "index"_a, "src"_a)
      .def("scatter_add_",
           [](py::object self, int64_t dim, const Tensor& i, const Tensor& src) {
             return inplace(self, [&](Tensor& x) { x.scatter_add_(dim, i, src); });
           },
           "dim"_a, "index"_a, "src"_a)
      .def("index_select",
           [](const Tensor& x, int64_t dim, const Tensor& i) {
             return nogil([&] { return x.index_select(dim, i); });
           },
           "dim"_a, "index"_a)
      .def("masked_fill",
           [](const Tensor& x, const Tensor& mask, py::handle v) {
             Scalar s = to_scalar(v, "masked_fill");
             return nogil([&] { return x.masked_fill(mask, s); });
           },
           "mask"_a, "value"_a)
      .def("masked_fill_",
           [](py::object self, const Tensor& mask, py::handle v) {
             Scalar s = to_scalar(v, "masked_fill_");
             return inplace(self, [&](Tensor& x) { x.masked_fill_(mask, s); });
           },
           "mask"_a, "value"_a)
      .def("masked_select",
           [](const Tensor& x, const Tensor& mask) {
             return nogil([&] { return masked_select(x, mask); });
           },
           "mask"_a)
      .def("nonzero", [](const Tensor& x) { return nogil([&] { return nonzero(x); }); })
      .def("equal", [](const Tensor& a, const Tensor& b) {
        py::gil_scoped_release no_gil;
        return a.equal(b);
      })
      .def("allclose",
           [](const Tensor& a, const Tensor& b, double rtol, double atol) {
             py::gil_scoped_release no_gil;
             return a.allclose(b, rtol, atol);
           },
           "other"_a, "rtol"_a = 1e-5, "atol"_a = 1e-8);

  // --- elementwise math: x.op(...), x.op_(...) ---
#define EMBER_PY_UNARY(name)                                                                \
  t.def(#name, [](const Tensor& x) { return nogil([&] { return x.name(); }); });            \
  t.def(#name "_", [](py::object self) { return inplace(self, [](Tensor& x) { x.name##_(); }); });
  EMBER_PY_UNARY(neg)
  EMBER_PY_UNARY(abs)
  EMBER_PY_UNARY(exp)
  EMBER_PY_UNARY(log)
  EMBER_PY_UNARY(sqrt)
  EMBER_PY_UNARY(rsqrt)
  EMBER_PY_UNARY(tanh)
  EMBER_PY_UNARY(sigmoid)
  EMBER_PY_UNARY(relu)
  EMBER_PY_UNARY(sin)
  EMBER_PY_UNARY(cos)
  EMBER_PY_UNARY(square)
  EMBER_PY_UNARY(reciprocal)
  EMBER_PY_UNARY(sign)
  EMBER_PY_UNARY(floor)
  EMBER_PY_UNARY(ceil)
  EMBER_PY_UNARY(round)
  EMBER_PY_UNARY(log1p)
  EMBER_PY_UNARY(expm1)
  EMBER_PY_UNARY(logical_not)
#undef EMBER_PY_UNARY
  t.def("negative", [](const Tensor& x) { return nogil([&] { return x.neg(); }); });

  // Binary methods taking a tensor or a number (add/sub with alpha=).
#define EMBER_PY_ALPHA(name)                                                                    \
  t.def(#name,                                                                                  \
        [](const Tensor& a, py::handle b, py::handle alpha) {                                   \
          Scalar al = to_scalar(alpha, #name);                                                  \
          py::object r = binary(                                                                \
              a, b, [&](const Tensor& x, const Tensor& y) { return x.name(y, al); },            \
              [&](const Tensor& x, Scalar y) { return x.name(y, al); });                        \
          if (r.ptr() == Py_NotImplemented)                                                     \
            throw py::type_error(#name "(): expected a tensor or a number for 'other'");        \
          return r;                                                                             \
        },                                                                                      \
        "other"_a, py::kw_only(), "alpha"_a = 1);                                               \
  t.def(#name "_",                                                                              \
        [](py::object self, py::handle b, py::handle alpha) {                                   \
          Scalar al = to_scalar(alpha, #name "_");                                              \
          py::object r = binary_inplace(                                                        \
              self, b, [&](Tensor& x, const Tensor& y) { x.name##_(y, al); },                   \
              [&](Tensor& x, Scalar y) { x.name##_(y, al); });                                  \
          if (r.ptr() == Py_NotImplemented)                                                     \
            throw py::type_error(#name "_(): expected a tensor or a number for 'other'");       \
          return r;                                                                             \
        },                                                                                      \
        "other"_a, py::kw_only(), "alpha"_a = 1);
  EMBER_PY_ALPHA(add)
  EMBER_PY_ALPHA(sub)
#undef EMBER_PY_ALPHA
#define EMBER_PY_BINARY(name, method)                                                           \
  t.def(#name, [](const Tensor& a, py::handle b) {                                              \
    py::object r = binary(                                                                      \
        a, b, [](const Tensor& x, const Tensor& y) { return x.method(y); },                     \
        [](const Tensor& x, Scalar y) { return x.method(y); });                                 \
    if (r.ptr() == Py_NotImplemented)                                                           \
      throw py::type_error(#name "(): expected a tensor or a number for 'other'");              \
    return r;                                                                                   \
  });
  EMBER_PY_BINARY(mul, mul)
  EMBER_PY_BINARY(multiply, mul)
  EMBER_PY_BINARY(div, div)
  EMBER_PY_BINARY(divide, div)
  EMBER_PY_BINARY(true_divide, div)
  EMBER_PY_BINARY(pow, pow)
  EMBER_PY_BINARY(eq, eq)
  EMBER_PY_BINARY(ne, ne)
  EMBER_PY_BINARY(lt, lt)
  EMBER_PY_BINARY(le, le)
  EMBER_PY_BINARY(gt, gt)
  EMBER_PY_BINARY(ge, ge)
#undef EMBER_PY_BINARY
#define EMBER_PY_BINARY_INPLACE(name, method)                                                   \
  t.def(#name, [](py::object self, py::handle b) {                                              \
    py::object r = binary_inplace(                                                              \
        self, b, [](Tensor& x, const Tensor& y) { x.method(y); },                               \
        [](Tensor& x, Scalar y) { x.method(y); });                                              \
    if (r.ptr() == Py_NotImplemented)                                                           \
      throw py::type_error(#name "(): expected a tensor or a number for 'other'");              \
    return r;                                                                                   \
  });
  EMBER_PY_BINARY_INPLACE(mul_, mul_)
  EMBER_PY_BINARY_INPLACE(div_, div_)
  EMBER_PY_BINARY_INPLACE(pow_, pow_)
#undef EMBER_PY_BINARY_INPLACE
  t.def("maximum", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.maximum(b); }); })
      .def("minimum", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.minimum(b); }); })
      .def("logical_and", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.logical_and(b); }); })
      .def("logical_or", [](const Tensor& a, const Tensor& b) { return nogil([&] { return a.logical_or(b); }); })
      .def("addcmul",
           [](const Tensor& x, const Tensor& a, const Tensor& b, py::handle v) {
             Scalar s = to_scalar(v, "addcmul");
             return nogil([&] { return x.addcmul(a, b, s); });
           },
           "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def("addcmul_",
           [](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
             Scalar s = to_scalar(v, "addcmul_");
             return inplace(self, [&](Tensor& x) { x.addcmul_(a, b, s); });
           },
           "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def("addcdiv",
           [](const Tensor& x, const Tensor& a, const Tensor& b, py::handle v) {
             Scalar s = to_scalar(v, "addcdiv");
             return nogil([&] { return x.addcdiv(a, b, s); });
           },
           "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def("addcdiv_",
           [](py::object self, const Tensor& a, const Tensor& b, py::handle v) {
             Scalar s = to_scalar(v, "addcdiv_");
             return inplace(self, [&](Tensor& x) { x.addcdiv_(a, b, s); });
           },
           "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1)
      .def("lerp",
           [](const Tensor& x, const Tensor& end, py::handle w) {
             Scalar s = to_scalar(w, "lerp");
             return nogil([&] { return x.lerp(end, s); });
           },
           "end"_a, "weight"_a)
      .def("lerp_",
           [](py::object self, const Tensor& end, py::handle w) {
             Scalar s = to_scalar(w, "lerp_");
             return inplace(self, [&](Tensor& x) { x.lerp_(end, s); });
           },
           "end"_a, "weight"_a)
      .def("clamp",
           [](const Tensor& x, py::handle min, py::handle max) {
             std::optional<Scalar> lo, hi;
             if (!min.is_none()) lo = to_scalar(min, "clamp");
             if (!max.is_none()) hi = to_scalar(max, "clamp");
             return nogil([&] { return x.clamp(lo, hi); });
           },
           "min"_a = py::none(), "max"_a = py::none())
      .def("clip",
           [](const Tensor& x, py::handle min, py::handle max) {
             std::optional<Scalar> lo, hi;
             if (!min.is_none()) lo = to_scalar(min, "clip");
             if (!max.is_none()) hi = to_scalar(max, "clip");
             return nogil([&] { return x.clamp(lo, hi); });
           },
           "min"_a = py::none(), "max"_a = py::none())
      .def("clamp_",
           [](py::object self, py::handle min, py::handle max) {
             std::optional<Scalar> lo, hi;
             if (!min.is_none()) lo = to_scalar(min, "clamp_");
             if (!max.is_none()) hi = to_scalar(max, "clamp_");
             return inplace(self, [&](Tensor& x) { x.clamp_(lo, hi); });
           },
           "min"_a = py::none(), "max"_a = py::none())
      .def("clamp_min",
           [](const Tensor& x, py::handle v) {
             Scalar s = to_scalar(v, "clamp_min");
             return nogil([&] { return x.clamp_min(s); });
           })
      .def("clamp_max", [](const Tensor& x, py::handle v) {
        Scalar s = to_scalar(v, "clamp_max");
        return nogil([&] { return x.clamp_max(s); });
      });

  // --- operators ---
  t.def("__add__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return x + y; },
                  [](const Tensor& x, Scalar y) { return x + y; });
  });
  t.def("__radd__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return y + x; },
                  [](const Tensor& x, Scalar y) { return y + x; });
  });
  t.def("__iadd__", [](py::object self, py::handle b) {
    return binary_inplace(self, b, [](Tensor& x, const Tensor& y) { x.add_(y); },
                          [](Tensor& x, Scalar y) { x.add_(y); });
  });
  t.def("__sub__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return x - y; },
                  [](const Tensor& x, Scalar y) { return x - y; });
  });
  t.def("__rsub__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return y - x; },
                  [](const Tensor& x, Scalar y) { return y - x; });
  });
  t.def("__isub__", [](py::object self, py::handle b) {
    return binary_inplace(self, b, [](Tensor& x, const Tensor& y) { x.sub_(y); },
                          [](Tensor& x, Scalar y) { x.sub_(y); });
  });
  t.def("__mul__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return x * y; },
                  [](const Tensor& x, Scalar y) { return x * y; });
  });
  t.def("__rmul__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return y * x; },
                  [](const Tensor& x, Scalar y) { return y * x; });
  });
  t.def("__imul__", [](py::object self, py::handle b) {
    return binary_inplace(self, b, [](Tensor& x, const Tensor& y) { x.mul_(y); },
                          [](Tensor& x, Scalar y) { x.mul_(y); });
  });
  t.def("__truediv__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return x / y; },
                  [](const Tensor& x, Scalar y) { return x / y; });
  });
  t.def("__rtruediv__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return y / x; },
                  [](const Tensor& x, Scalar y) { return y / x; });
  });
  t.def("__itruediv__", [](py::object self, py::handle b) {
    return binary_inplace(self, b, [](Tensor& x, const Tensor& y) { x.div_(y); },
                          [](Tensor& x, Scalar y) { x.div_(y); });
  });
  t.def("__pow__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return pow(x, y); },
                  [](const Tensor& x, Scalar y) { return pow(x, y); });
  });
  t.def("__rpow__", [](const Tensor& a, py::handle b) {
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return pow(y, x); },
                  [](const Tensor& x, Scalar y) { return pow(y, x); });
  });
  t.def("__ipow__", [](py::object self, py::handle b) {
    return binary_inplace(self, b, [](Tensor& x, const Tensor& y) { x.pow_(y); },
                          [](Tensor& x, Scalar y) { x.pow_(y); });
  });
  t.def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return not_implemented();
    const Tensor& tb = as_tensor(b);
    return py::cast(nogil([&] { return a.matmul(tb); }));
  });
  t.def("__neg__", [](const Tensor& a) { return nogil([&] { return -a; }); });
  t.def("__pos__", [](const Tensor& a) { return a; });
  t.def("__abs__", [](const Tensor& a) { return nogil([&] { return a.abs(); }); });
  t.def("__invert__", [](const Tensor& a) {
    EMBER_CHECK(a.dtype() == kBool, "[__invert__] ~ is defined for bool tensors, got ", a.dtype());
    return nogil([&] { return logical_not(a); });
  });
  t.def("__and__", [](const Tensor& a, const Tensor& b) {
    EMBER_CHECK(a.dtype() == kBool && b.dtype() == kBool,
                "[__and__] & is defined for bool tensors, got ", a.dtype(), " and ", b.dtype());
    return nogil([&] { return logical_and(a, b); });
  });
  t.def("__or__", [](const Tensor& a, const Tensor& b) {
    EMBER_CHECK(a.dtype() == kBool && b.dtype() == kBool,
                "[__or__] | is defined for bool tensors, got ", a.dtype(), " and ", b.dtype());
    return nogil([&] { return logical_or(a, b); });
  });
#define EMBER_PY_COMPARE(dunder, fn)                                                            \
  t.def(dunder, [](const Tensor& a, py::handle b) {                                             \
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return fn(x, y); },              \
                  [](const Tensor& x, Scalar y) { return fn(x, y); });                          \
  });
  EMBER_PY_COMPARE("__eq__", eq)
  EMBER_PY_COMPARE("__ne__", ne)
  EMBER_PY_COMPARE("__lt__", lt)
  EMBER_PY_COMPARE("__le__", le)
  EMBER_PY_COMPARE("__gt__", gt)
  EMBER_PY_COMPARE("__ge__", ge)
#undef EMBER_PY_COMPARE
}

}  // namespace ember::python
