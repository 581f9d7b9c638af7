// ember.device, the dtypes (ember.float32, ...), seeds and the CPU thread count.
#include <array>
#include <sstream>

#include "bind.h"
#include "ember/backend/cpu/conv_dnnl.h"

namespace ember::python {
namespace {

std::array<py::object*, kNumDTypes>& dtype_objects() {
  static std::array<py::object*, kNumDTypes> objects{};  // never destroyed: see to_size
  return objects;
}

std::string device_repr(const Device& d) {
  std::string r = std::string("device(type='") + device_type_name(d.type()) + "'";
  if (d.has_index()) r += ", index=" + std::to_string(d.index());
  return r + ")";
}

}  // namespace

py::object dtype_object(DType t) { return *dtype_objects()[static_cast<size_t>(t)]; }

void bind_device(py::module_& m) {
  py::class_<Device>(m, "device", "Where a tensor lives: 'cpu', 'cpu:N', 'cuda' or 'cuda:N'.")
      .def(py::init([](const std::string& s) { return Device(s); }), "type"_a)
      .def(py::init([](const std::string& type, int index) {
             Device d(type);
             EMBER_CHECK(!d.has_index(), "[device] device string '", type,
                         "' already has an index; pass the type alone with index=");
             EMBER_CHECK_VALUE(index >= 0, "[device] expected a non-negative index, got ", index);
             return Device(d.type(), index);
           }),
           "type"_a, "index"_a)
      .def(py::init([](const Device& d) { return d; }))
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type()); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index());
                             })
      .def("__str__", &Device::str)
      .def("__repr__", &device_repr)
      .def("__eq__",
           [](const Device& a, py::handle b) {
             if (py::isinstance<Device>(b)) return a == b.cast<Device>();
             if (py::isinstance<py::str>(b)) return a == Device(b.cast<std::string>());
             return false;
           })
      .def("__hash__", [](const Device& d) { return std::hash<Device>()(d); })
      .def(py::pickle([](const Device& d) { return d.str(); },
                      [](const std::string& s) { return Device(s); }));
  py::implicitly_convertible<py::str, Device>();

  py::class_<DType>(m, "dtype", "An element type: ember.float32, ember.int64, ...")
      .def_property_readonly("is_floating_point",
                             [](DType t) { return ember::is_floating_point(t); })
      .def_property_readonly("is_complex", [](DType t) { return ember::is_complex(t); })
      .def_property_readonly("is_signed", [](DType t) { return t != kBool && t != kUInt8; })
      .def("to_real", [](DType t) { return to_real_dtype(t); })
      .def("to_complex",
           [](DType t) {
             EMBER_CHECK(ember::is_floating_point(t) || ember::is_complex(t),
                         "to_complex is only supported for floating point dtypes, got ", t);
             return to_complex_dtype(t);
           })
      .def_property_readonly("itemsize", [](DType t) { return itemsize(t); })
      .def("__repr__", [](DType t) { return std::string("ember.") + dtype_name(t); })
      .def("__eq__",
           [](DType a, py::handle b) { return py::isinstance<DType>(b) && a == b.cast<DType>(); })
      .def("__hash__", [](DType t) { return static_cast<int>(t); })
      .def(py::pickle([](DType t) { return static_cast<int>(t); },
                      [](int t) { return static_cast<DType>(t); }));
  struct Name {
    const char* name;
    DType dtype;
  };
  const Name names[] = {{"float32", kFloat32},   {"float", kFloat32},   {"float64", kFloat64},
                        {"double", kFloat64},    {"float16", kFloat16}, {"half", kFloat16},
                        {"bfloat16", kBFloat16}, {"int64", kInt64},     {"long", kInt64},
                        {"int32", kInt32},       {"int", kInt32},       {"uint8", kUInt8},
                        {"int16", kInt16},       {"short", kInt16},     {"int8", kInt8},
                        {"bool", kBool},         {"complex64", kComplex64},
                        {"cfloat", kComplex64},  {"complex128", kComplex128},
                        {"cdouble", kComplex128}, {"complex32", kComplex32},
                        {"chalf", kComplex32}};
  for (const Name& n : names) {
    py::object*& slot = dtype_objects()[static_cast<size_t>(n.dtype)];
    if (slot == nullptr) slot = new py::object(py::cast(n.dtype));
    m.attr(n.name) = *slot;
  }

  m.def("_promote_types", &promote_types, "type1"_a, "type2"_a);
  m.def("_can_cast", &can_cast, "from_"_a, "to"_a);
  m.def(
      "manual_seed", [](uint64_t seed) { manual_seed(seed); }, "seed"_a,
      "Seeds the default generator (every device's random numbers come from it).");
  m.def("initial_seed", [] { return default_generator().initial_seed(); });
  m.def("set_num_threads", &set_num_threads, "n"_a,
        "Threads of ember's CPU pool (intra-op parallelism).");
  m.def("get_num_threads", &get_num_threads);
  m.def("_have_dnnl", &cpu::have_dnnl);
  m.def("_set_allow_winograd", &cpu::set_allow_winograd, "allow"_a);
  m.def("_allow_winograd", &cpu::allow_winograd);
  m.def("is_grad_enabled", [] { return GradMode::is_enabled(); });
  m.def("_set_grad_enabled", [](bool on) { GradMode::set_enabled(on); });
}

}  // namespace ember::python
