// ember.amp: mixed precision (torch.autocast and GradScaler). The guard is C++'s amp::autocast,
// held between __enter__ and __exit__; autocast's state is per thread, as in PyTorch, so a region
// covers the calls the entering thread makes (and the replicas and workers that carry its state).
#include "bind.h"

#include "ember/amp/grad_scaler.h"
#include "ember/core/autocast.h"

namespace ember::python {
namespace {

DeviceType to_device_type(const std::string& name) {
  if (name == "cpu") return kCPU;
  if (name == "cuda") return kCUDA;
  throw py::value_error("autocast: device_type must be 'cpu' or 'cuda', got '" + name + "'");
}

// One `with` region. Entering makes the C++ guard, exiting destroys it: the settings it saved are
// restored then, so regions nest as in PyTorch.
struct AutocastRegion {
  DeviceType device_type;
  std::optional<DType> dtype;
  bool enabled;
  std::optional<bool> cache_enabled;
  std::unique_ptr<amp::autocast> guard;
};

}  // namespace

namespace {
// Every parameter of a torch-style optimizer (its param_groups' 'params').
std::vector<Tensor> optimizer_params(py::handle optimizer) {
  std::vector<Tensor> out;
  for (py::handle group : optimizer.attr("param_groups"))
    for (py::handle p : group["params"]) out.push_back(as_tensor(p));
  return out;
}
}  // namespace

void bind_amp(py::module_& m) {
  py::module_ a = m.def_submodule("_amp", "ember.amp's C++ part");
  py::class_<AutocastRegion>(a, "_AutocastRegion")
      .def(py::init([](const std::string& device_type, py::handle dtype, bool enabled,
                       std::optional<bool> cache_enabled) {
             std::optional<DType> d;
             if (!dtype.is_none()) d = to_dtype(dtype);
             return AutocastRegion{to_device_type(device_type), d, enabled, cache_enabled, {}};
           }),
           "device_type"_a, "dtype"_a = py::none(), "enabled"_a = true,
           "cache_enabled"_a = py::none())
      .def("__enter__",
           [](AutocastRegion& r) {
             if (r.guard) throw py::value_error("autocast: this region is already entered");
             r.guard = std::make_unique<amp::autocast>(r.device_type, r.dtype, r.enabled,
                                                       r.cache_enabled);
           })
      .def("__exit__", [](AutocastRegion& r, py::args) { r.guard.reset(); });
  a.def("is_autocast_enabled",
        [](const std::string& d) { return amp::is_autocast_enabled(to_device_type(d)); });
  a.def("set_autocast_enabled",
        [](const std::string& d, bool on) { amp::set_autocast_enabled(to_device_type(d), on); });
  a.def("get_autocast_dtype", [](const std::string& d) {
    return dtype_object(amp::get_autocast_dtype(to_device_type(d)));
  });
  a.def("set_autocast_dtype", [](const std::string& d, py::handle dtype) {
    amp::set_autocast_dtype(to_device_type(d), to_dtype(dtype));
  });
  a.def("is_autocast_cache_enabled", &amp::is_autocast_cache_enabled);
  a.def("set_autocast_cache_enabled", &amp::set_autocast_cache_enabled);
  a.def("clear_autocast_cache", &amp::clear_autocast_cache);

  py::class_<amp::GradScaler>(a, "GradScaler")
      .def(py::init([](double init_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval, bool enabled) {
             amp::GradScalerOptions o;
             o.with_init_scale(init_scale).with_growth_factor(growth_factor);
             o.with_backoff_factor(backoff_factor).with_growth_interval(growth_interval);
             return amp::GradScaler(o.with_enabled(enabled));
           }),
           "init_scale"_a = 65536.0, "growth_factor"_a = 2.0, "backoff_factor"_a = 0.5,
           "growth_interval"_a = 2000, "enabled"_a = true)
      .def("scale",
           [](amp::GradScaler& s, py::handle outputs) -> py::object {
             if (is_tensor(outputs)) {
               const Tensor& t = as_tensor(outputs);
               return py::cast(nogil([&] { return s.scale(t); }));
             }
             std::vector<Tensor> ts;
             for (py::handle h : outputs) ts.push_back(as_tensor(h));
             ReleaseGil no_gil;
             auto scaled = s.scale(ts);
             py::gil_scoped_acquire gil;
             return py::cast(scaled);
           })
      // Python optimizers (ember.optim's) are known by their identity and param_groups.
      .def("unscale_",
           [](amp::GradScaler& s, py::handle opt) {
             std::vector<Tensor> params = optimizer_params(opt);
             ReleaseGil no_gil;
             s.unscale_(opt.ptr(), params);
           })
      .def("_step",
           [](amp::GradScaler& s, py::handle opt) {
             std::vector<Tensor> params = optimizer_params(opt);
             py::object step = opt.attr("step");
             ReleaseGil no_gil;
             return s.step(opt.ptr(), params, [&] {
               py::gil_scoped_acquire gil;
               step();
             });
           })
      .def(
          "update",
          [](amp::GradScaler& s, py::handle new_scale) {
            std::optional<double> v;
            if (is_tensor(new_scale))
              v = as_tensor(new_scale).item<double>();
            else if (!new_scale.is_none())
              v = new_scale.cast<double>();
            ReleaseGil no_gil;
            s.update(v);
          },
          "new_scale"_a = py::none())
      .def("get_scale", &amp::GradScaler::get_scale)
      .def("get_growth_factor", &amp::GradScaler::get_growth_factor)
      .def("set_growth_factor", &amp::GradScaler::set_growth_factor)
      .def("get_backoff_factor", &amp::GradScaler::get_backoff_factor)
      .def("set_backoff_factor", &amp::GradScaler::set_backoff_factor)
      .def("get_growth_interval", &amp::GradScaler::get_growth_interval)
      .def("set_growth_interval", &amp::GradScaler::set_growth_interval)
      .def("is_enabled", &amp::GradScaler::is_enabled)
      .def("_state_dict", &amp::GradScaler::state_dict)
      .def("_load_state_dict", &amp::GradScaler::load_state_dict);
}

}  // namespace ember::python
