// ember.nn.parallel: replicate, scatter, gather, parallel_apply, data_parallel and DataParallel.
// The replicas of a Python module are copies of its class (nn.cpp, Note [Python modules]) whose
// Python forward runs on every device; each runs on a thread of its own (parallel::run_on_devices)
// and takes the GIL only while Python runs, so the devices' ember work overlaps.
#include "bind.h"

namespace ember::python {
namespace {

std::vector<Device> devices_of(py::handle h) {
  std::vector<Device> out;
  if (PyLong_Check(h.ptr()) || py::isinstance<py::str>(h) || py::isinstance<Device>(h))
    return {resolve_device(to_device(h))};
  for (py::handle d : h) out.push_back(resolve_device(to_device(d)));
  EMBER_CHECK(!out.empty(), "[parallel] expected at least one device");
  return out;
}

// The devices DataParallel uses by default: every GPU, else every (virtual) CPU device.
std::vector<Device> default_devices() {
  std::vector<Device> out;
  int n = cuda::device_count();
  for (int i = 0; i < n; ++i) out.emplace_back(kCUDA, i);
  if (out.empty())
    for (int i = 0; i < cpu::device_count(); ++i) out.emplace_back(kCPU, i);
  return out;
}

// An argument's piece for device i of n: tensors are split along dim (then moved), anything else
// is the same object on every device.
std::vector<py::tuple> scatter_args(const py::tuple& args, const std::vector<Device>& devices,
                                    int64_t dim, size_t* used) {
  std::vector<std::vector<Tensor>> chunks(args.size());
  size_t n = devices.size();
  for (size_t k = 0; k < args.size(); ++k)
    if (is_tensor(args[k])) {
      const Tensor& t = as_tensor(args[k]);
      ReleaseGil no_gil;
      chunks[k] = parallel::scatter(t, devices, dim);
      n = std::min(n, chunks[k].size());
    }
  *used = n;
  std::vector<py::tuple> out;
  for (size_t i = 0; i < n; ++i) {
    py::tuple piece(args.size());
    for (size_t k = 0; k < args.size(); ++k)
      piece[k] = is_tensor(args[k]) ? py::cast(chunks[k][i]) : args[k];
    out.push_back(piece);
  }
  return out;
}

// Runs modules[i](*inputs[i]) on devices[i], each in its own thread.
std::vector<py::object> apply_all(const std::vector<py::object>& modules,
                                  const std::vector<py::tuple>& inputs,
                                  const std::vector<Device>& devices) {
  EMBER_CHECK(modules.size() == inputs.size() && inputs.size() <= devices.size(),
              "[parallel_apply] got ", modules.size(), " modules, ", inputs.size(), " inputs and ",
              devices.size(), " devices");
  std::vector<py::object> outputs(modules.size());
  std::vector<Device> used(devices.begin(), devices.begin() + static_cast<long>(modules.size()));
  // A replica's Python exception is raised again in the caller, of the same type, naming the
  // replica (as PyTorch's parallel_apply does).
  std::vector<std::pair<py::object, std::string>> errors(modules.size());
  {
    ReleaseGil no_gil;
    parallel::run_on_devices(used, [&](size_t i) {
      py::gil_scoped_acquire gil;
      try {
        outputs[i] = modules[i](*inputs[i]);
      } catch (py::error_already_set& e) {
        errors[i] = {e.type(), py::str(e.value())};
      }
    });
  }
  for (size_t i = 0; i < errors.size(); ++i)
    if (errors[i].first) {
      std::string name = py::str(errors[i].first.attr("__name__"));
      std::string msg = "Caught " + name + " in replica " + std::to_string(i) + " on device " +
                        used[i].str() + ": " + errors[i].second;
      PyErr_SetString(errors[i].first.ptr(), msg.c_str());
      throw py::error_already_set();
    }
  return outputs;
}

// Outputs of the replicas (tensors, or tuples/lists of tensors) joined on `device`.
py::object gather_outputs(const std::vector<py::object>& outs, Device device, int64_t dim) {
  if (is_tensor(outs[0])) {
    std::vector<Tensor> ts;
    for (const py::object& o : outs) ts.push_back(as_tensor(o));
    Tensor joined;
    {
      ReleaseGil no_gil;
      joined = parallel::gather(ts, device, dim);
    }
    return py::cast(std::move(joined));
  }
  if (py::isinstance<py::tuple>(outs[0]) || py::isinstance<py::list>(outs[0])) {
    size_t n = py::len(outs[0]);
    py::tuple out(n);
    for (size_t k = 0; k < n; ++k) {
      std::vector<py::object> column;
      for (const py::object& o : outs)
        column.push_back(py::reinterpret_borrow<py::object>(o[py::int_(k)]));
      out[k] = gather_outputs(column, device, dim);
    }
    return out;
  }
  throw py::type_error("gather: outputs must be tensors or tuples of tensors");
}

std::vector<py::object> replicas_of(py::handle module, const std::vector<Device>& devices) {
  std::shared_ptr<nn::Module> m = module_ptr(module);
  std::vector<std::shared_ptr<nn::Module>> r;
  {
    ReleaseGil no_gil;
    r = parallel::replicate(m, devices);
  }
  std::vector<py::object> out;
  for (auto& x : r) out.push_back(module_object(x));
  return out;
}

py::object data_parallel_call(py::handle module, const py::tuple& inputs,
                              const std::vector<Device>& devices, Device output_device,
                              int64_t dim) {
  if (devices.size() == 1) {
    py::tuple moved(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k)
      moved[k] = is_tensor(inputs[k]) ? py::cast(as_tensor(inputs[k]).to(devices[0])) : inputs[k];
    return module(*moved);
  }
  size_t used = 0;
  std::vector<py::tuple> pieces = scatter_args(inputs, devices, dim, &used);
  std::vector<Device> on(devices.begin(), devices.begin() + static_cast<long>(used));
  std::vector<py::object> replicas = replicas_of(module, on);
  return gather_outputs(apply_all(replicas, pieces, on), output_device, dim);
}

}  // namespace

void bind_parallel(py::module_& m) {
  py::module_ p = m.def_submodule("_parallel", "ember.nn.parallel's C++ part");
  p.def(
      "replicate",
      [](py::handle module, py::handle devices) {
        return replicas_of(module, devices_of(devices));
      },
      "network"_a, "devices"_a);
  p.def(
      "scatter",
      [](py::handle inputs, py::handle target_gpus, int64_t dim) {
        std::vector<Device> devices = devices_of(target_gpus);
        py::tuple args = is_tensor(inputs) ? py::make_tuple(inputs)
                                           : py::tuple(py::reinterpret_borrow<py::object>(inputs));
        size_t used = 0;
        std::vector<py::tuple> pieces = scatter_args(args, devices, dim, &used);
        py::tuple out(pieces.size());
        for (size_t i = 0; i < pieces.size(); ++i)
          out[i] = is_tensor(inputs) ? pieces[i][0] : py::object(pieces[i]);
        return out;
      },
      "inputs"_a, "target_gpus"_a, "dim"_a = 0);
  p.def(
      "gather",
      [](py::handle outputs, py::handle target_device, int64_t dim) {
        std::vector<py::object> outs;
        for (py::handle o : outputs) outs.push_back(py::reinterpret_borrow<py::object>(o));
        return gather_outputs(outs, resolve_device(to_device(target_device)), dim);
      },
      "outputs"_a, "target_device"_a, "dim"_a = 0);
  p.def(
      "parallel_apply",
      [](py::handle modules, py::handle inputs, py::handle devices) {
        std::vector<py::object> mods, outs;
        std::vector<py::tuple> ins;
        std::vector<Device> devs;
        for (py::handle mm : modules) mods.push_back(py::reinterpret_borrow<py::object>(mm));
        for (py::handle x : inputs)
          ins.push_back(is_tensor(x) ? py::make_tuple(x)
                                     : py::tuple(py::reinterpret_borrow<py::object>(x)));
        if (devices.is_none()) {
          // Each replica runs on the device of its first tensor argument.
          for (const py::tuple& t : ins) {
            Device d(kCPU, 0);
            for (py::handle a : t)
              if (is_tensor(a)) {
                d = as_tensor(a).device();
                break;
              }
            devs.push_back(d);
          }
        } else {
          devs = devices_of(devices);
        }
        outs = apply_all(mods, ins, devs);
        py::list out;
        for (auto& o : outs) out.append(o);
        return out;
      },
      "modules"_a, "inputs"_a, "devices"_a = py::none());
  p.def(
      "data_parallel",
      [](py::handle module, py::handle inputs, py::handle device_ids, py::handle output_device,
         int64_t dim) {
        std::vector<Device> devices =
            device_ids.is_none() ? default_devices() : devices_of(device_ids);
        Device out =
            output_device.is_none() ? devices[0] : resolve_device(to_device(output_device));
        py::tuple args = is_tensor(inputs) ? py::make_tuple(inputs)
                                           : py::tuple(py::reinterpret_borrow<py::object>(inputs));
        return data_parallel_call(module, args, devices, out, dim);
      },
      "module"_a, "inputs"_a, "device_ids"_a = py::none(), "output_device"_a = py::none(),
      "dim"_a = 0);

  // DataParallel is the C++ module (so it nests, saves and moves like one); a call with other
  // than one tensor goes through data_parallel_call.
  py::class_<nn::DataParallel, nn::Module, std::shared_ptr<nn::DataParallel>>(
      p, "DataParallel", py::dynamic_attr(),
      "Splits each batch across devices and runs a replica of the module on each")
      .def(py::init(
               [](py::handle module, py::handle device_ids, py::handle output_device, int64_t dim) {
                 std::vector<Device> devices =
                     device_ids.is_none() ? default_devices() : devices_of(device_ids);
                 std::optional<Device> out;
                 if (!output_device.is_none()) out = to_device(output_device);
                 return std::make_shared<nn::DataParallel>(module_ptr(module), devices, out, dim);
               }),
           "module"_a, "device_ids"_a = py::none(), "output_device"_a = py::none(), "dim"_a = 0)
      .def_property_readonly("module",
                             [](const nn::DataParallel& dp) { return module_object(dp.module()); })
      .def_property_readonly("device_ids", &nn::DataParallel::device_ids)
      .def("forward",
           [](py::handle self, py::args args, py::kwargs kwargs) -> py::object {
             auto& dp = self.cast<nn::DataParallel&>();
             py::object module = module_object(dp.module());
             if (is_native(module) && args.size() == 1 && kwargs.empty() && is_tensor(args[0])) {
               const Tensor& x = as_tensor(args[0]);
               Tensor y;
               {
                 ReleaseGil no_gil;
                 y = dp.forward(x);
               }
               return py::cast(std::move(y));
             }
             if (!kwargs.empty())
               throw py::type_error("DataParallel: keyword arguments to forward are not supported");
             dp.check_module_device();
             return data_parallel_call(module, args, dp.device_ids(), dp.output_device(), dp.dim());
           })
      .def("__call__", [](py::handle self, py::args args, py::kwargs kwargs) {
        return self.attr("forward")(*args, **kwargs);
      });
}

}  // namespace ember::python
