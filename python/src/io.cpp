// ember.save / ember.load's C++ part: safetensors files (atomic writes, validated reads).
#include "bind.h"

namespace ember::python {

void bind_io(py::module_& m) {
  py::module_ io = m.def_submodule("_io", "ember's safetensors reader and writer");
  io.def(
      "save_safetensors",
      [](py::handle tensors, const std::string& path, const io::Metadata& metadata) {
        nn::NamedTensors named;
        for (auto item : py::reinterpret_borrow<py::dict>(tensors))
          named.emplace_back(py::str(item.first), as_tensor(item.second));
        ReleaseGil no_gil;
        io::save_safetensors(path, named, metadata);
      },
      "tensors"_a, "path"_a, "metadata"_a = io::Metadata{},
      "Writes a safetensors file atomically: a crash mid-save leaves the previous file.");
  io.def(
      "load_safetensors",
      [](const std::string& path, py::handle device) {
        Device d = device.is_none() ? Device(kCPU, 0) : to_device(device);
        io::SafetensorsFile f;
        {
          ReleaseGil no_gil;
          f = io::load_safetensors(path, d);
        }
        py::object od = py::module_::import("collections").attr("OrderedDict")();
        for (auto& [n, t] : f.tensors) od[py::str(n)] = py::cast(t);
        return py::make_tuple(od, f.metadata);
      },
      "path"_a, "device"_a = py::none());
}

}  // namespace ember::python
