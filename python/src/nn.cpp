// ember.nn: Module (subclassable in Python, as torch.nn.Module), ember's layers, Sequential and
// the models. A Python subclass keeps its parameters, buffers and children in the C++ module
// (Note [Python modules]), so C++ code - Sequential, DataParallel's replicate, DDP, the
// optimizers, state dicts - sees a Python module like any other.
#include <pybind11/functional.h>

#include <unordered_set>

#include "bind.h"

namespace ember::python {
namespace {

// Note [Python modules]: `self.fc = nn.Linear(...)` and `self.w = nn.Parameter(...)` register a
// child or a parameter in the C++ module (Module.__setattr__); reading them back goes through
// Module.__getattr__, which Python calls only for names not in the instance's __dict__. Other
// attributes live in __dict__. A C++ pointer to a Python module (module_ptr) owns a reference to
// its Python object, so the subclass's forward and attributes live as long as C++ uses it. A copy
// for a replica (clone_impl) is made as PyTorch's replicate makes one: a new instance of the class
// without calling __init__, the __dict__ copied, the registered tensors and children cloned.

py::handle parameter_type() { return python_object("Parameter"); }

// Note [Sharded parameters]: FSDP2 shards a parameter in place; PyTorch's becomes a DTensor.
// ember's stays a tensor in the module's slot, and is marked here, so that reading it back gives
// an object of the DTensor class ember.distributed.tensor registers (its to_local(),
// placements, full_tensor()). A pointer set: most processes mark nothing, and a module's
// attribute read costs one lookup when some are marked.
std::unordered_set<const TensorImpl*>& sharded_parameters() {
  static auto* marked = new std::unordered_set<const TensorImpl*>();
  return *marked;
}

// A Parameter object sharing t (module.weight, module.parameters()).
py::object wrap_parameter(const Tensor& t) {
  py::handle type = parameter_type();
  if (!sharded_parameters().empty() && sharded_parameters().count(t.unsafe_impl()))
    type = python_object("DTensor");
  py::object p = type.attr("__new__")(type);
  py::type::of<Tensor>().attr("__init__")(p, t);
  return p;
}

bool python_alive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }

// The C++ module of `self`, or null before Module.__init__ has made it.
nn::Module* constructed(py::handle self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self.ptr());
  py::detail::value_and_holder vh = inst->get_value_and_holder();  // one C++ base: its only one
  return vh.holder_constructed() ? self.cast<nn::Module*>() : nullptr;
}

nn::Module* module_of(py::handle self) {
  nn::Module* m = constructed(self);
  if (m == nullptr)
    throw py::attribute_error(
        "cannot use " + type_name(self) +
        " before Module.__init__() is called (call super().__init__() first)");
  return m;
}

class PyModule : public nn::Module {
 public:
  Tensor forward(const Tensor& x) override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const nn::Module*>(this), "forward");
    if (!f) EMBER_FAIL("[", name(), "] the module has no forward: define forward(self, ...) in it");
    return f(x).cast<Tensor>();
  }
  std::string name() const override {
    py::gil_scoped_acquire gil;
    return type_name(self());
  }
  std::string extra_repr() const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const nn::Module*>(this), "extra_repr");
    return f ? f().cast<std::string>() : std::string();
  }

 protected:
  std::shared_ptr<Module> clone_impl() const override {
    py::gil_scoped_acquire gil;
    py::object me = self();
    py::object cls = py::type::of(me);
    py::object copy = cls.attr("__new__")(cls);
    py::type::of<nn::Module>().attr("__init__")(copy);
    copy.attr("__dict__").attr("update")(me.attr("__dict__"));
    clone_registered_into(*copy.cast<nn::Module*>());
    return module_ptr(copy);
  }

 private:
  py::object self() const { return py::cast(static_cast<const nn::Module*>(this)); }
};

py::tuple pair_tuple(const Pair& p) { return py::make_tuple(p[0], p[1]); }

py::object named_list(const std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>& v) {
  py::list out;
  for (auto& [n, c] : v) out.append(py::make_tuple(n, module_object(c)));
  return out;
}

std::vector<std::pair<std::string, Tensor>> state_from_dict(py::handle d) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto item : py::reinterpret_borrow<py::dict>(d))
    out.emplace_back(py::str(item.first), as_tensor(item.second));
  return out;
}

py::object state_to_dict(const nn::NamedTensors& state) {
  py::object od = py::module_::import("collections").attr("OrderedDict")();
  for (auto& [n, t] : state) od[py::str(n)] = py::cast(t);
  return od;
}

// Module.to: in place, the module's floating tensors to dtype (Tensor.to's arguments).
void module_to(nn::Module& m, const py::args& args, const py::kwargs& kwargs) {
  ToArgs a = to_args(args, kwargs);
  ReleaseGil no_gil;
  if (a.device && a.dtype)
    m.to(*a.device, *a.dtype, a.non_blocking);
  else if (a.device)
    m.to(*a.device, a.non_blocking);
  else if (a.dtype)
    m.to(*a.dtype);
}

// A layer's device= and dtype= keywords: its tensors moved there after construction.
void place(nn::Module& m, py::handle device, py::handle dtype) {
  if (!device.is_none()) m.to(to_device(device));
  if (!dtype.is_none()) m.to(to_dtype(dtype));
}

// Conv2d's padding: ints, 'valid' or 'same' (conv_string_padding's rules; a module keeps
// symmetric padding, so an even span under 'same' is refused here).
Pair conv_padding(py::handle padding, Pair kernel, Pair dilation, Pair stride) {
  if (!py::isinstance<py::str>(padding)) return to_pair(padding, "padding");
  // The module refuses these with ValueError, as torch.nn.Conv2d does (F.conv2d's are runtime
  // errors).
  std::string name = py::str(padding);
  EMBER_CHECK_VALUE(name == "same" || name == "valid", "Invalid padding string '", name,
                    "', should be one of {'valid', 'same'}");
  EMBER_CHECK_VALUE(name == "valid" || stride == (Pair{1, 1}),
                    "padding='same' is not supported for strided convolutions");
  StringPadding<2> p = conv_string_padding<2>(name, kernel, stride, dilation);
  EMBER_CHECK_VALUE(p.extra == (Pair{0, 0}), "Conv2d: padding='same' with an even kernel span "
                    "needs asymmetric padding, which ember's Conv2d module does not keep (call "
                    "F.conv2d(x, weight, bias, padding='same'), which does)");
  return p.before;
}

py::object max_pool_forward(nn::MaxPool2d& self, const Tensor& x) {
  Tensor y, indices;
  {
    ReleaseGil no_gil;
    if (self.return_indices)
      std::tie(y, indices) = self.forward_with_indices(x);
    else
      y = self.forward(x);
  }
  if (!self.return_indices) return py::cast(std::move(y));
  return py::make_tuple(std::move(y), std::move(indices));
}

template <typename M>
py::class_<M, nn::Module, std::shared_ptr<M>> layer(py::module_& m, const char* name,
                                                    const char* doc) {
  py::class_<M, nn::Module, std::shared_ptr<M>> c(m, name, py::dynamic_attr(), doc);
  c.attr("__ember_native__") = true;
  return c;
}

}  // namespace

std::shared_ptr<nn::Module> module_ptr(py::handle h) {
  if (!py::isinstance<nn::Module>(h))
    throw py::type_error("expected an ember.nn.Module, got " + type_name(h));
  nn::Module* m = module_of(h);
  std::shared_ptr<py::object> owner(new py::object(py::reinterpret_borrow<py::object>(h)),
                                    [](py::object* o) {
                                      if (!python_alive()) return;  // nothing left to release
                                      py::gil_scoped_acquire gil;
                                      delete o;
                                    });
  return std::shared_ptr<nn::Module>(owner, m);
}

py::object module_object(const std::shared_ptr<nn::Module>& m) { return py::cast(m); }

bool is_native(py::handle module) {
  PyObject* dict = Py_TYPE(module.ptr())->tp_dict;
  return dict != nullptr && PyDict_GetItemString(dict, "__ember_native__") != nullptr;
}

namespace {

// Whether a call may go straight to the C++ forward: one of ember's layers whose binding does not
// define a forward of its own (MaxPool2d's returns indices too, GPT's takes targets).
bool calls_cpp_forward(py::handle module) {
  PyObject* dict = Py_TYPE(module.ptr())->tp_dict;
  return is_native(module) && PyDict_GetItemString(dict, "forward") == nullptr;
}

// Whether forward hooks were registered on this module (module.py keeps them in its __dict__).
bool has_python_hooks(py::handle module) {
  PyObject** dict = _PyObject_GetDictPtr(module.ptr());
  if (dict == nullptr || *dict == nullptr) return false;
  PyObject* hooks = PyDict_GetItemString(*dict, "_ember_hooks");
  return hooks != nullptr && PyObject_IsTrue(hooks) == 1;
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn", "ember.nn's C++ part");
  py::class_<nn::Module, PyModule, std::shared_ptr<nn::Module>> mod(
      nn, "Module", py::dynamic_attr(),
      "The base of every layer and model; subclass it and define forward, as torch.nn.Module.");
  // PyTorch's add_module and register_module: register, or replace a child of that name.
  auto add_module = [](nn::Module& self, const std::string& name, py::handle module) {
    std::shared_ptr<nn::Module> child = module_ptr(module);
    if (self.named_child(name))
      self.replace_module(name, child);
    else
      self.register_module(name, child);
  };
  nn.def(
      "_mark_sharded",
      [](const Tensor& t, bool on) {
        if (on)
          sharded_parameters().insert(t.unsafe_impl());
        else
          sharded_parameters().erase(t.unsafe_impl());
      },
      "tensor"_a, "on"_a = true);
  nn.def("_tensor_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.unsafe_impl()); });
  mod.def(py::init_alias<>())
      .def("__call__",
           [](py::handle self, py::args args, py::kwargs kwargs) -> py::object {
             if (calls_cpp_forward(self) && args.size() == 1 && kwargs.empty() &&
                 is_tensor(args[0])) {
               nn::Module* mm = module_of(self);
               const Tensor& x = as_tensor(args[0]);
               Tensor y;
               {
                 ReleaseGil no_gil;
                 y = mm->forward(x);
               }
               return py::cast(std::move(y));
             }
             return self.attr("forward")(*args, **kwargs);
           })
      .def(
          "forward",
          [](nn::Module& self, const Tensor& x) {
            ReleaseGil no_gil;
            return self.forward(x);
          },
          "input"_a)
      .def("__setattr__",
           [](py::handle self, const std::string& name, py::handle value) {
             if (py::isinstance(value, parameter_type())) {
               nn::Module* mm = module_of(self);
               const Tensor& t = as_tensor(value);
               if (Tensor* slot = mm->parameter_slot(name))
                 *slot = t;
               else
                 mm->register_parameter(name, t, t.requires_grad());
               return;
             }
             if (py::isinstance<nn::Module>(value)) {
               nn::Module* mm = module_of(self);
               std::shared_ptr<nn::Module> child = module_ptr(value);
               if (mm->named_child(name))
                 mm->replace_module(name, child);
               else
                 mm->register_module(name, child);
               return;
             }
             nn::Module* mm = constructed(self);
             if (mm != nullptr) {
               if (Tensor* slot = mm->parameter_slot(name)) {
                 if (!value.is_none())
                   throw py::type_error("cannot assign '" + type_name(value) + "' as parameter '" +
                                        name + "' (ember.nn.Parameter or None expected)");
                 *slot = Tensor();
                 return;
               }
               if (Tensor* slot = mm->buffer_slot(name)) {
                 if (!value.is_none() && !is_tensor(value))
                   throw py::type_error("cannot assign '" + type_name(value) + "' as buffer '" +
                                        name + "' (ember.Tensor or None expected)");
                 *slot = value.is_none() ? Tensor() : as_tensor(value);
                 return;
               }
               if (value.is_none() && mm->remove_module(name)) return;
             }
             py::object setattr =
                 py::module_::import("builtins").attr("object").attr("__setattr__");
             setattr(self, name, value);
           })
      .def("__getattr__",
           [](py::handle self, const std::string& name) -> py::object {
             nn::Module* mm = constructed(self);
             if (mm != nullptr) {
               if (Tensor* slot = mm->parameter_slot(name))
                 return slot->defined() ? wrap_parameter(*slot) : py::none();
               if (Tensor* slot = mm->buffer_slot(name))
                 return slot->defined() ? py::cast(*slot) : py::none();
               if (std::shared_ptr<nn::Module> c = mm->named_child(name)) return module_object(c);
             }
             throw py::attribute_error("'" + type_name(self) + "' object has no attribute '" +
                                       name + "'");
           })
      .def("__delattr__",
           [](py::handle self, const std::string& name) {
             nn::Module* mm = constructed(self);
             if (mm != nullptr) {
               if (Tensor* slot = mm->parameter_slot(name)) return void(*slot = Tensor());
               if (Tensor* slot = mm->buffer_slot(name)) return void(*slot = Tensor());
               if (mm->remove_module(name)) return;
             }
             py::module_::import("builtins").attr("object").attr("__delattr__")(self, name);
           })
      .def(
          "register_parameter",
          [](nn::Module& self, const std::string& name, py::handle param) {
            if (Tensor* slot = self.parameter_slot(name)) {
              *slot = param.is_none() ? Tensor() : as_tensor(param);
              return;
            }
            Tensor t = param.is_none() ? Tensor() : as_tensor(param);
            self.register_parameter(name, t, t.defined() && t.requires_grad());
          },
          "name"_a, "param"_a)
      .def(
          "register_buffer",
          [](nn::Module& self, const std::string& name, py::handle tensor, bool persistent) {
            Tensor t = tensor.is_none() ? Tensor() : as_tensor(tensor);
            if (Tensor* slot = self.buffer_slot(name)) {
              *slot = t;
              self.set_persistent(name, persistent);
            } else {
              self.register_buffer(name, t, persistent);
            }
          },
          "name"_a, "tensor"_a, "persistent"_a = true)
      .def_property_readonly("_non_persistent_buffers_set",
                             [](const nn::Module& self) {
                               py::set out;
                               for (const std::string& n : self.registered_names(false))
                                 if (!self.is_persistent(n)) out.add(py::str(n));
                               return out;
                             })
      .def("add_module", add_module, "name"_a, "module"_a)
      .def("register_module", add_module, "name"_a, "module"_a)
      .def(
          "parameters",
          [](const nn::Module& self, bool recurse) {
            py::list out;
            for (const Tensor& t : self.parameters(recurse)) out.append(wrap_parameter(t));
            return py::iter(out);
          },
          "recurse"_a = true)
      .def(
          "named_parameters",
          [](const nn::Module& self, const std::string& prefix, bool recurse) {
            py::list out;
            for (auto& [n, t] : self.named_parameters(recurse))
              out.append(py::make_tuple(prefix.empty() ? n : prefix + "." + n, wrap_parameter(t)));
            return py::iter(out);
          },
          "prefix"_a = "", "recurse"_a = true)
      .def(
          "buffers",
          [](const nn::Module& self, bool recurse) {
            return py::iter(py::cast(self.buffers(recurse)));
          },
          "recurse"_a = true)
      .def(
          "named_buffers",
          [](const nn::Module& self, const std::string& prefix, bool recurse) {
            py::list out;
            for (auto& [n, t] : self.named_buffers(recurse))
              out.append(py::make_tuple(prefix.empty() ? n : prefix + "." + n, t));
            return py::iter(out);
          },
          "prefix"_a = "", "recurse"_a = true)
      .def("children",
           [](const nn::Module& self) {
             py::list out;
             for (auto& c : self.children()) out.append(module_object(c));
             return py::iter(out);
           })
      .def("named_children",
           [](const nn::Module& self) { return py::iter(named_list(self.named_children())); })
      .def("modules",
           [](nn::Module& self) {
             py::list out;
             for (auto& [n, c] : self.named_modules()) out.append(module_object(c));
             return py::iter(out);
           })
      .def("named_modules",
           [](nn::Module& self) { return py::iter(named_list(self.named_modules())); })
      .def(
          "get_submodule",
          [](py::handle self, const std::string& target) -> py::object {
            py::object cur = py::reinterpret_borrow<py::object>(self);
            if (target.empty()) return cur;
            size_t start = 0;
            while (start <= target.size()) {
              size_t dot = target.find('.', start);
              std::string part =
                  target.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
              std::shared_ptr<nn::Module> c = module_of(cur)->named_child(part);
              if (!c)
                throw py::attribute_error(type_name(cur) + " has no attribute `" + part + "`");
              cur = module_object(c);
              if (dot == std::string::npos) break;
              start = dot + 1;
            }
            return cur;
          },
          "target"_a)
      .def(
          "apply",
          [](py::handle self, py::function fn) {
            module_of(self)->apply(
                [&](nn::Module& mm) { fn(py::cast(&mm, py::return_value_policy::reference)); });
            return self;
          },
          "fn"_a)
      .def("to",
           [](py::handle self, py::args args, py::kwargs kwargs) {
             module_to(*module_of(self), args, kwargs);
             return self;
           })
      .def(
          "cuda",
          [](py::handle self, py::handle device) {
            Device d = device.is_none() ? Device(kCUDA) : to_device(device);
            EMBER_CHECK(d.is_cuda(), "[cuda] expected a CUDA device, got ", d);
            nn::Module* mm = module_of(self);
            ReleaseGil no_gil;
            mm->to(d);
            return self;
          },
          "device"_a = py::none())
      .def("cpu",
           [](py::handle self) {
             nn::Module* mm = module_of(self);
             ReleaseGil no_gil;
             mm->to(Device(kCPU, 0));
             return self;
           })
      .def("float",
           [](py::handle self) {
             module_of(self)->to(kFloat32);
             return self;
           })
      .def("double",
           [](py::handle self) {
             module_of(self)->to(kFloat64);
             return self;
           })
      .def("half",
           [](py::handle self) {
             module_of(self)->to(kFloat16);
             return self;
           })
      .def("bfloat16",
           [](py::handle self) {
             module_of(self)->to(kBFloat16);
             return self;
           })
      .def(
          "train",
          [](py::handle self, bool on) {
            module_of(self)->train(on);
            return self;
          },
          "mode"_a = true)
      .def("eval",
           [](py::handle self) {
             module_of(self)->eval();
             return self;
           })
      .def_property(
          "training", [](const nn::Module& self) { return self.is_training(); },
          [](nn::Module& self, bool on) {
            // Only this module, as assigning module.training in PyTorch: train() is recursive,
            // so the modules below get their flags back (parents first, as named_modules lists).
            std::vector<std::pair<std::shared_ptr<nn::Module>, bool>> below;
            for (auto& [n, c] : self.named_modules())
              if (c.get() != &self) below.emplace_back(c, c->is_training());
            self.train(on);
            for (auto& [c, t] : below) c->train(t);
          })
      .def(
          "requires_grad_",
          [](py::handle self, bool on) {
            for (Tensor& t : module_of(self)->parameters()) t.requires_grad_(on);
            return self;
          },
          "requires_grad"_a = true)
      .def("zero_grad", &nn::Module::zero_grad, "set_to_none"_a = false)
      .def("share_memory",
           [](py::handle self) {
             nn::Module* mm = module_of(self);
             ReleaseGil no_gil;
             mm->share_memory();
             return self;
           })
      .def("state_dict", [](const nn::Module& self) { return state_to_dict(self.state_dict()); })
      .def(
          "load_state_dict",
          [](nn::Module& self, py::handle state, bool strict) {
            auto s = state_from_dict(state);
            ReleaseGil no_gil;
            self.load_state_dict(s, strict);
          },
          "state_dict"_a, "strict"_a = true)
      .def("_registered",
           [](nn::Module& self) {
             // This module's own slots, undefined ones as None, and its children: what pickling a
             // Python module rebuilds (ember/multiprocessing/reductions.py).
             py::list params, buffers;
             auto slot = [](Tensor* t) { return t->defined() ? py::cast(*t) : py::none(); };
             for (const std::string& n : self.registered_names(true))
               params.append(py::make_tuple(n, slot(self.parameter_slot(n))));
             for (const std::string& n : self.registered_names(false))
               buffers.append(py::make_tuple(n, slot(self.buffer_slot(n)), self.is_persistent(n)));
             return py::make_tuple(params, buffers, named_list(self.named_children()));
           })
      .def("_replaced_modules", &nn::Module::replaced_modules)
      .def("extra_repr", &nn::Module::extra_repr)
      .def("_get_name", &nn::Module::name)
      .def("__repr__", [](const nn::Module& self) { return self.repr(); });

  // --- ember's layers ---
  layer<nn::Linear>(nn, "Linear", "y = x W^T + b")
      .def(py::init([](int64_t in, int64_t out, bool bias, py::handle device, py::handle dtype) {
             auto l = std::make_shared<nn::Linear>(in, out, bias);
             place(*l, device, dtype);
             return l;
           }),
           "in_features"_a, "out_features"_a, "bias"_a = true, "device"_a = py::none(),
           "dtype"_a = py::none())
      .def_readonly("in_features", &nn::Linear::in_features)
      .def_readonly("out_features", &nn::Linear::out_features)
      .def("reset_parameters", &nn::Linear::reset_parameters)
      .def("_ember_args", [](const nn::Linear& l) {
        return py::make_tuple(l.in_features, l.out_features, l.bias.defined());
      });
  layer<nn::Conv2d>(nn, "Conv2d", "2-D convolution")
      .def(py::init([](int64_t in, int64_t out, py::handle k, py::handle stride, py::handle padding,
                       py::handle dilation, int64_t groups, bool bias,
                       const std::string& padding_mode, py::handle device, py::handle dtype) {
             nn::Conv2dOptions o(in, out, to_pair(k, "kernel_size"));
             o.stride = to_pair(stride, "stride");
             o.dilation = to_pair(dilation, "dilation");
             o.padding = conv_padding(padding, o.kernel_size, o.dilation, o.stride);
             o.groups = groups;
             o.bias = bias;
             EMBER_CHECK_VALUE(padding_mode == "zeros",
                               "Conv2d: padding_mode '", padding_mode, "' is not supported by "
                               "ember's C++ Conv2d (use nn.ReflectionPad2d/ReplicationPad2d before "
                               "a padding=0 convolution)");
             auto c = std::make_shared<nn::Conv2d>(o);
             place(*c, device, dtype);
             return c;
           }),
           "in_channels"_a, "out_channels"_a, "kernel_size"_a, "stride"_a = 1, "padding"_a = 0,
           "dilation"_a = 1, "groups"_a = 1, "bias"_a = true, "padding_mode"_a = "zeros",
           "device"_a = py::none(), "dtype"_a = py::none())
      .def_property_readonly("stride",
                             [](const nn::Conv2d& c) { return pair_tuple(c.options.stride); })
      .def_property_readonly("padding",
                             [](const nn::Conv2d& c) { return pair_tuple(c.options.padding); })
      .def_property_readonly("dilation",
                             [](const nn::Conv2d& c) { return pair_tuple(c.options.dilation); })
      .def_property_readonly("groups", [](const nn::Conv2d& c) { return c.options.groups; })
      .def_property_readonly("in_channels",
                             [](const nn::Conv2d& c) { return c.options.in_channels; })
      .def_property_readonly("out_channels",
                             [](const nn::Conv2d& c) { return c.options.out_channels; })
      .def_property_readonly("kernel_size",
                             [](const nn::Conv2d& c) {
                               return py::make_tuple(c.options.kernel_size[0],
                                                     c.options.kernel_size[1]);
                             })
      .def("reset_parameters", &nn::Conv2d::reset_parameters)
      .def("_ember_args", [](const nn::Conv2d& c) {
        const nn::Conv2dOptions& o = c.options;
        return py::make_tuple(o.in_channels, o.out_channels, pair_tuple(o.kernel_size),
                              pair_tuple(o.stride), pair_tuple(o.padding), pair_tuple(o.dilation),
                              o.groups, o.bias);
      });
  layer<nn::MaxPool2d>(nn, "MaxPool2d", "2-D max pooling")
      .def(py::init([](py::handle k, py::handle stride, py::handle padding, py::handle dilation,
                       bool return_indices, bool ceil_mode) {
             std::optional<Pair> s;
             if (!stride.is_none()) s = to_pair(stride, "stride");
             auto m = std::make_shared<nn::MaxPool2d>(to_pair(k, "kernel_size"), s,
                                                      to_pair(padding, "padding"),
                                                      to_pair(dilation, "dilation"), ceil_mode);
             m->return_indices = return_indices;
             return m;
           }),
           "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "dilation"_a = 1,
           "return_indices"_a = false, "ceil_mode"_a = false)
      .def_readwrite("return_indices", &nn::MaxPool2d::return_indices)
      // With return_indices the call returns (output, indices), which Module's C++ forward (one
      // tensor) cannot: this forward takes over Module's for this layer.
      .def("forward", &max_pool_forward, "input"_a)
      .def("_ember_args", [](const nn::MaxPool2d& p) {
        return py::make_tuple(pair_tuple(p.kernel_size), pair_tuple(p.stride),
                              pair_tuple(p.padding), pair_tuple(p.dilation), p.return_indices,
                              p.ceil_mode);
      });
  layer<nn::AvgPool2d>(nn, "AvgPool2d", "2-D average pooling")
      .def(py::init([](py::handle k, py::handle stride, py::handle padding, bool ceil_mode,
                       bool count_include_pad) {
             std::optional<Pair> s;
             if (!stride.is_none()) s = to_pair(stride, "stride");
             return std::make_shared<nn::AvgPool2d>(to_pair(k, "kernel_size"), s,
                                                    to_pair(padding, "padding"), ceil_mode,
                                                    count_include_pad);
           }),
           "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "ceil_mode"_a = false,
           "count_include_pad"_a = true)
      .def("_ember_args", [](const nn::AvgPool2d& p) {
        return py::make_tuple(pair_tuple(p.kernel_size), pair_tuple(p.stride),
                              pair_tuple(p.padding), p.ceil_mode, p.count_include_pad);
      });
  layer<nn::AdaptiveAvgPool2d>(nn, "AdaptiveAvgPool2d", "average pooling to a fixed output size")
      .def(py::init([](py::handle size) {
             return std::make_shared<nn::AdaptiveAvgPool2d>(to_pair(size, "output_size"));
           }),
           "output_size"_a)
      .def("_ember_args", [](const nn::AdaptiveAvgPool2d& p) {
        return py::make_tuple(pair_tuple(p.output_size));
      });
  // inplace= is accepted for PyTorch's signatures; ember's activations always return a new
  // tensor (the same values).
  auto no_args = [](const nn::Module&) { return py::tuple(); };
  layer<nn::ReLU>(nn, "ReLU", "max(x, 0)")
      .def(py::init([](bool) { return std::make_shared<nn::ReLU>(); }), "inplace"_a = false)
      .def("_ember_args", no_args);
  layer<nn::Sigmoid>(nn, "Sigmoid", "1 / (1 + exp(-x))")
      .def(py::init<>())
      .def("_ember_args", no_args);
  layer<nn::Tanh>(nn, "Tanh", "tanh(x)").def(py::init<>()).def("_ember_args", no_args);
  layer<nn::Softmax>(nn, "Softmax", "softmax over dim")
      .def(py::init<int64_t>(), "dim"_a)
      .def("_ember_args", [](const nn::Softmax& s) { return py::make_tuple(s.dim); });
  layer<nn::LogSoftmax>(nn, "LogSoftmax", "log_softmax over dim")
      .def(py::init<int64_t>(), "dim"_a)
      .def("_ember_args", [](const nn::LogSoftmax& s) { return py::make_tuple(s.dim); });
  layer<nn::Flatten>(nn, "Flatten", "flattens dims start_dim..end_dim")
      .def(py::init<int64_t, int64_t>(), "start_dim"_a = 1, "end_dim"_a = -1)
      .def("_ember_args",
           [](const nn::Flatten& f) { return py::make_tuple(f.start_dim, f.end_dim); });
  layer<nn::Dropout>(nn, "Dropout", "zeroes elements with probability p in training")
      .def(py::init([](double p, bool) { return std::make_shared<nn::Dropout>(p); }), "p"_a = 0.5,
           "inplace"_a = false)
      .def_readonly("p", &nn::Dropout::p)
      .def("_ember_args", [](const nn::Dropout& d) { return py::make_tuple(d.p); });
  layer<nn::Embedding>(nn, "Embedding", "a lookup table of vectors")
      .def(py::init<int64_t, int64_t>(), "num_embeddings"_a, "embedding_dim"_a)
      .def("_ember_args", [](const nn::Embedding& e) {
        return py::make_tuple(e.weight.size(0), e.weight.size(1));
      });
  // One per class: pybind11 converts self to the bound class, not to their unbound base.
  auto batch_norm_args = [](const auto& b) {
    return py::make_tuple(b.num_features, b.eps, b.momentum, b.affine, b.track_running_stats);
  };
  layer<nn::BatchNorm1d>(nn, "BatchNorm1d", "batch normalisation over (N, C) or (N, C, L)")
      .def(py::init([](int64_t n, double eps, double momentum, bool affine, bool track,
                       py::handle device, py::handle dtype) {
             auto b = std::make_shared<nn::BatchNorm1d>(n, eps, momentum, affine, track);
             place(*b, device, dtype);
             return b;
           }),
           "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1, "affine"_a = true,
           "track_running_stats"_a = true, "device"_a = py::none(), "dtype"_a = py::none())
      .def("_ember_args", [batch_norm_args](const nn::BatchNorm1d& b) { return batch_norm_args(b); });
  layer<nn::BatchNorm2d>(nn, "BatchNorm2d", "batch normalisation over (N, C, H, W)")
      .def(py::init([](int64_t n, double eps, double momentum, bool affine, bool track,
                       py::handle device, py::handle dtype) {
             auto b = std::make_shared<nn::BatchNorm2d>(n, eps, momentum, affine, track);
             place(*b, device, dtype);
             return b;
           }),
           "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1, "affine"_a = true,
           "track_running_stats"_a = true, "device"_a = py::none(), "dtype"_a = py::none())
      .def("_ember_args", [batch_norm_args](const nn::BatchNorm2d& b) { return batch_norm_args(b); });
  layer<nn::BatchNorm3d>(nn, "BatchNorm3d", "batch normalisation over (N, C, D, H, W)")
      .def(py::init([](int64_t n, double eps, double momentum, bool affine, bool track,
                       py::handle device, py::handle dtype) {
             auto b = std::make_shared<nn::BatchNorm3d>(n, eps, momentum, affine, track);
             place(*b, device, dtype);
             return b;
           }),
           "num_features"_a, "eps"_a = 1e-5, "momentum"_a = 0.1, "affine"_a = true,
           "track_running_stats"_a = true, "device"_a = py::none(), "dtype"_a = py::none())
      .def("_ember_args", [batch_norm_args](const nn::BatchNorm3d& b) { return batch_norm_args(b); });
  layer<nn::Sequential>(nn, "Sequential", "modules applied in order")
      .def(py::init([](py::args modules) {
        std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> named;
        if (modules.size() == 1 && py::isinstance<py::dict>(modules[0])) {
          for (auto item : py::reinterpret_borrow<py::dict>(modules[0]))
            named.emplace_back(py::str(item.first), module_ptr(item.second));
        } else {
          for (size_t i = 0; i < modules.size(); ++i)
            named.emplace_back(std::to_string(i), module_ptr(modules[i]));
        }
        return std::make_shared<nn::Sequential>(std::move(named));
      }))
      // Straight through C++ when every child is one of ember's layers as made; otherwise each
      // child is called from Python, so that its hooks, its forward override (a Python subclass,
      // a parametrized layer) and its Python results take part, as in PyTorch.
      .def("forward",
           [](py::handle self, py::handle x) -> py::object {
             auto& s = self.cast<nn::Sequential&>();
             std::vector<py::object> children;
             bool native = is_tensor(x);
             for (size_t i = 0; i < s.size(); ++i) {
               children.push_back(module_object(s[i]));
               native = native && calls_cpp_forward(children.back()) &&
                        !has_python_hooks(children.back());
             }
             if (native) {
               const Tensor& t = as_tensor(x);
               Tensor y;
               {
                 ReleaseGil no_gil;
                 y = s.forward(t);
               }
               return py::cast(std::move(y));
             }
             py::object y = py::reinterpret_borrow<py::object>(x);
             for (py::object& c : children) y = c(y);
             return y;
           },
           "input"_a)
      .def("__len__", &nn::Sequential::size)
      .def("__getitem__",
           [](const nn::Sequential& s, int64_t i) {
             auto n = static_cast<int64_t>(s.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n)
               throw py::index_error("index " + std::to_string(i) + " is out of range");
             return module_object(s[static_cast<size_t>(i)]);
           })
      .def("__getitem__",
           [](py::handle self, const py::slice& slice) {
             // A Sequential of the chosen children under their names, as PyTorch's.
             py::list named(self.attr("named_children")());
             size_t start = 0, stop = 0, step = 0, count = 0;
             if (!slice.compute(named.size(), &start, &stop, &step, &count))
               throw py::error_already_set();
             py::dict chosen;
             for (size_t k = 0; k < count; ++k) {
               py::tuple item = named[start + k * step];
               chosen[item[0]] = item[1];
             }
             return py::type::of(self)(chosen);
           })
      .def("__iter__",
           [](const nn::Sequential& s) {
             py::list out;
             for (size_t i = 0; i < s.size(); ++i) out.append(module_object(s[i]));
             return py::iter(out);
           })
      .def("append",
           [](py::handle self, py::handle module) {
             self.cast<nn::Sequential&>().push_back(module_ptr(module));
             return self;
           })
      .def_property_readonly_static("_ember_children_in_args", [](py::handle) { return true; })
      .def("_ember_args", [](const nn::Sequential& s) {
        py::dict named;  // children by name: they are pickled themselves
        for (auto& [n, c] : s.named_children()) named[py::str(n)] = module_object(c);
        return py::make_tuple(named);
      });

  py::module_ models = m.def_submodule("_models", "ember.models' C++ part");
  layer<models::LeNet>(models, "LeNet", "LeNet-5 for 1x28x28 images")
      .def(py::init<int64_t>(), "num_classes"_a = 10)
      .def("_ember_args",
           [](const models::LeNet& l) { return py::make_tuple(l.fc3->out_features); });
  layer<models::ResNet18>(models, "ResNet18", "ResNet-18 with torchvision's module names")
      .def(py::init([](int64_t in_channels, int64_t num_classes, bool small_stem) {
             return std::make_shared<models::ResNet18>(
                 models::ResNet18Options()
                     .with_in_channels(in_channels)
                     .with_num_classes(num_classes)
                     .with_stem(small_stem ? models::ResNetStem::Small
                                           : models::ResNetStem::ImageNet));
           }),
           "in_channels"_a = 3, "num_classes"_a = 1000, "small_stem"_a = false)
      .def("_ember_args", [](const models::ResNet18& r) {
        return py::make_tuple(r.options.in_channels, r.options.num_classes,
                              r.options.stem == models::ResNetStem::Small);
      });
  models.def("resnet18_fashion_mnist", &models::resnet18_fashion_mnist, "image_size"_a = 28,
             "d2l's ResNet-18 for 1-channel Fashion-MNIST (the small stem up to 32x32 images)");
  auto gpt_config = [](const models::GPT& g) {
    const models::GPTConfig& c = g.config;
    return py::module_::import("types").attr("SimpleNamespace")(
        "block_size"_a = c.block_size, "vocab_size"_a = c.vocab_size, "n_layer"_a = c.n_layer,
        "n_head"_a = c.n_head, "n_embd"_a = c.n_embd, "dropout"_a = c.dropout, "bias"_a = c.bias);
  };
  layer<models::GPT>(models, "GPT", "nanoGPT's GPT (its module names and state-dict keys)")
      .def(py::init([](int64_t block_size, int64_t vocab_size, int64_t n_layer, int64_t n_head,
                       int64_t n_embd, double dropout, bool bias) {
             return std::make_shared<models::GPT>(
                 models::GPTConfig{block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias});
           }),
           "block_size"_a = 1024, "vocab_size"_a = 50304, "n_layer"_a = 12, "n_head"_a = 12,
           "n_embd"_a = 768, "dropout"_a = 0.0, "bias"_a = true)
      .def(
          "forward",
          [](models::GPT& g, const Tensor& idx, py::object targets) -> py::object {
            if (targets.is_none()) {
              ReleaseGil no_gil;
              Tensor logits = g.forward(idx);
              py::gil_scoped_acquire gil;
              return py::cast(logits);
            }
            const Tensor& t = as_tensor(targets);
            std::pair<Tensor, Tensor> r;
            {
              ReleaseGil no_gil;
              r = g.forward(idx, t);
            }
            return py::make_tuple(r.first, r.second);
          },
          "idx"_a, "targets"_a = py::none(),
          "logits (B, T, vocab); with targets, (logits, mean cross-entropy)")
      .def(
          "generate",
          [](models::GPT& g, const Tensor& idx, int64_t max_new_tokens, double temperature,
             std::optional<int64_t> top_k) {
            ReleaseGil no_gil;
            return g.generate(idx, max_new_tokens, temperature, top_k);
          },
          "idx"_a, "max_new_tokens"_a, "temperature"_a = 1.0, "top_k"_a = py::none())
      .def("get_num_params", &models::GPT::num_parameters, "non_embedding"_a = true)
      .def_property_readonly("config", gpt_config)
      .def("_ember_args", [](const models::GPT& g) {
        const models::GPTConfig& c = g.config;
        return py::make_tuple(c.block_size, c.vocab_size, c.n_layer, c.n_head, c.n_embd,
                              c.dropout, c.bias);
      });
  layer<models::MLP>(models, "MLP", "a multilayer perceptron with ReLU between")
      .def(py::init<std::vector<int64_t>>(), "sizes"_a = std::vector<int64_t>{784, 256, 256, 10})
      .def("_ember_args", [](const models::MLP& mlp) {
        std::vector<int64_t> sizes;  // from the weights: (out, in) each
        for (auto& [n, t] : mlp.named_parameters())
          if (t.dim() == 2) {
            if (sizes.empty()) sizes.push_back(t.size(1));
            sizes.push_back(t.size(0));
          }
        return py::make_tuple(sizes);
      });

  py::module_ init = nn.def_submodule("_init", "ember.nn.init's C++ part");
  auto inplace_init = [&](const char* name, auto fn) {
    init.def(name, [fn](py::object t, py::args args, py::kwargs kw) {
      fn(t.cast<Tensor&>(), args, kw);
      return t;
    });
  };
  inplace_init("uniform_", [](Tensor& t, py::args a, py::kwargs k) {
    nn::init::uniform_(t,
                       a.size() > 0      ? a[0].cast<double>()
                       : k.contains("a") ? k["a"].cast<double>()
                                         : 0.0,
                       a.size() > 1      ? a[1].cast<double>()
                       : k.contains("b") ? k["b"].cast<double>()
                                         : 1.0);
  });
  inplace_init("normal_", [](Tensor& t, py::args a, py::kwargs k) {
    nn::init::normal_(t,
                      a.size() > 0         ? a[0].cast<double>()
                      : k.contains("mean") ? k["mean"].cast<double>()
                                           : 0.0,
                      a.size() > 1        ? a[1].cast<double>()
                      : k.contains("std") ? k["std"].cast<double>()
                                          : 1.0);
  });
  inplace_init("constant_", [](Tensor& t, py::args a, py::kwargs k) {
    nn::init::constant_(
        t, to_scalar(a.size() > 0 ? py::object(a[0]) : py::object(k["val"]), "constant_"));
  });
  inplace_init("zeros_", [](Tensor& t, py::args, py::kwargs) { nn::init::zeros_(t); });
  inplace_init("ones_", [](Tensor& t, py::args, py::kwargs) { nn::init::ones_(t); });
  inplace_init("xavier_uniform_", [](Tensor& t, py::args a, py::kwargs k) {
    nn::init::xavier_uniform_(t, a.size() > 0         ? a[0].cast<double>()
                                 : k.contains("gain") ? k["gain"].cast<double>()
                                                      : 1.0);
  });
  inplace_init("xavier_normal_", [](Tensor& t, py::args a, py::kwargs k) {
    nn::init::xavier_normal_(t, a.size() > 0         ? a[0].cast<double>()
                                : k.contains("gain") ? k["gain"].cast<double>()
                                                     : 1.0);
  });
  auto kaiming = [](bool uniform) {
    return [uniform](Tensor& t, py::args a, py::kwargs k) {
      double slope = a.size() > 0      ? a[0].cast<double>()
                     : k.contains("a") ? k["a"].cast<double>()
                                       : 0.0;
      std::string mode = k.contains("mode") ? k["mode"].cast<std::string>() : "fan_in";
      std::string nl =
          k.contains("nonlinearity") ? k["nonlinearity"].cast<std::string>() : "leaky_relu";
      EMBER_CHECK_VALUE(mode == "fan_in" || mode == "fan_out",
                        "[kaiming] mode must be fan_in or fan_out, got ", mode);
      nn::init::Nonlinearity n = nl == "relu"         ? nn::init::Nonlinearity::ReLU
                                 : nl == "leaky_relu" ? nn::init::Nonlinearity::LeakyReLU
                                 : nl == "tanh"       ? nn::init::Nonlinearity::Tanh
                                 : nl == "sigmoid"    ? nn::init::Nonlinearity::Sigmoid
                                 : nl == "linear"
                                     ? nn::init::Nonlinearity::Linear
                                     : throw ValueError("[kaiming] unknown nonlinearity " + nl);
      auto fan = mode == "fan_in" ? nn::init::FanMode::FanIn : nn::init::FanMode::FanOut;
      if (uniform)
        nn::init::kaiming_uniform_(t, slope, fan, n);
      else
        nn::init::kaiming_normal_(t, slope, fan, n);
    };
  };
  inplace_init("kaiming_uniform_", kaiming(true));
  inplace_init("kaiming_normal_", kaiming(false));
}

}  // namespace ember::python
