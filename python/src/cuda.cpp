// ember.cuda: devices and their properties, memory statistics and the cache, streams and events.
// A build or a machine without CUDA answers "no devices" (and why); calls that need a GPU raise.
#include "bind.h"
#include "ember/backend/cudnn.h"
#include "ember/ops/attention.h"

namespace ember::python {
namespace {

// A device argument: None (the current device), an int, "cuda:1" or ember.device.
int device_index(py::handle h) {
  if (h.is_none()) return -1;
  if (PyLong_Check(h.ptr())) return h.cast<int>();
  Device d = to_device(h);
  EMBER_CHECK(d.is_cuda(), "[cuda] expected a CUDA device, got ", d);
  return d.index();
}

}  // namespace

void bind_cuda(py::module_& m) {
  py::module_ c = m.def_submodule("_cuda", "ember.cuda's C++ part");
  c.def("is_available", &cuda::is_available);
  c.def("device_count", &cuda::device_count);
  c.def("unavailable_reason", &cuda::unavailable_reason,
        "Why no CUDA device can be used ('' when one can).");
  c.def("current_device", &cuda::current_device);
  c.def(
      "set_device", [](py::handle d) { cuda::set_device(device_index(d)); }, "device"_a);
  c.def(
      "get_device_name", [](py::handle d) { return cuda::get_device_name(device_index(d)); },
      "device"_a = py::none());
  c.def(
      "get_device_capability",
      [](py::handle d) {
        cuda::DeviceProperties p = cuda::get_device_properties(device_index(d));
        return py::make_tuple(p.major, p.minor);
      },
      "device"_a = py::none());
  py::class_<cuda::DeviceProperties>(c, "DeviceProperties")
      .def_readonly("name", &cuda::DeviceProperties::name)
      .def_readonly("major", &cuda::DeviceProperties::major)
      .def_readonly("minor", &cuda::DeviceProperties::minor)
      .def_readonly("total_memory", &cuda::DeviceProperties::total_memory)
      .def_readonly("multi_processor_count", &cuda::DeviceProperties::multi_processor_count)
      .def_readonly("clock_rate_khz", &cuda::DeviceProperties::clock_rate_khz)
      .def_readonly("memory_clock_rate_khz", &cuda::DeviceProperties::memory_clock_rate_khz)
      .def_readonly("memory_bus_width", &cuda::DeviceProperties::memory_bus_width)
      .def_readonly("l2_cache_size", &cuda::DeviceProperties::l2_cache_size)
      .def_readonly("pci_bus_id", &cuda::DeviceProperties::pci_bus_id)
      .def_readonly("uuid", &cuda::DeviceProperties::uuid)
      .def_readonly("max_threads_per_block", &cuda::DeviceProperties::max_threads_per_block)
      .def("__repr__", [](const cuda::DeviceProperties& p) {
        return "_CudaDeviceProperties(name='" + p.name + "', major=" + std::to_string(p.major) +
               ", minor=" + std::to_string(p.minor) +
               ", total_memory=" + std::to_string(p.total_memory / (1024 * 1024)) +
               "MB, multi_processor_count=" + std::to_string(p.multi_processor_count) + ")";
      });
  c.def(
      "get_device_properties",
      [](py::handle d) { return cuda::get_device_properties(device_index(d)); },
      "device"_a = py::none());
  c.def(
      "mem_get_info", [](py::handle d) { return cuda::mem_get_info(device_index(d)); },
      "device"_a = py::none());
  c.def("can_device_access_peer", &cuda::can_device_access_peer, "device"_a, "peer_device"_a);
  c.def("driver_version", &cuda::driver_version);
  c.def("runtime_version", &cuda::runtime_version);
  c.def("visible_devices", &cuda::visible_devices);
  c.def(
      "synchronize",
      [](py::handle d) {
        int i = device_index(d);
        ReleaseGil no_gil;
        cuda::synchronize(i);
      },
      "device"_a = py::none());

#define EMBER_PY_MEMORY(name) \
  c.def(                      \
      #name, [](py::handle d) { return cuda::name(device_index(d)); }, "device"_a = py::none());
  EMBER_PY_MEMORY(memory_allocated)
  EMBER_PY_MEMORY(max_memory_allocated)
  EMBER_PY_MEMORY(memory_reserved)
  EMBER_PY_MEMORY(memory_cached)
  EMBER_PY_MEMORY(max_memory_reserved)
  EMBER_PY_MEMORY(memory_stats)
  EMBER_PY_MEMORY(memory_summary)
#undef EMBER_PY_MEMORY
  c.def(
      "reset_peak_memory_stats",
      [](py::handle d) { cuda::reset_peak_memory_stats(device_index(d)); },
      "device"_a = py::none());
  c.def("empty_cache", [] {
    ReleaseGil no_gil;
    cuda::empty_cache();
  });
  c.def(
      "set_per_process_memory_fraction",
      [](double f, py::handle d) { cuda::set_per_process_memory_fraction(f, device_index(d)); },
      "fraction"_a, "device"_a = py::none());
  // torch.backends.cuda's attention switches (they choose ember's kernels on the CPU too).
  for (auto [name, backend] : {std::pair{"math", SdpBackend::Math},
                               std::pair{"flash", SdpBackend::Flash},
                               std::pair{"mem_efficient", SdpBackend::MemEfficient},
                               std::pair{"cudnn", SdpBackend::Cudnn}}) {
    c.def((std::string("enable_") + name + "_sdp").c_str(),
          [backend](bool on) { set_sdp_backend_enabled(backend, on); });
    c.def((std::string(name) + "_sdp_enabled").c_str(),
          [backend] { return sdp_backend_enabled(backend); });
  }
  c.def("set_allow_tf32", &cuda::set_allow_tf32);
  c.def("allow_tf32", &cuda::allow_tf32);
  c.def("cudnn_built", &cudnn::built);
  c.def("cudnn_version", &cudnn::version);
  c.def("set_cudnn_enabled", &cudnn::set_enabled);
  c.def("cudnn_enabled", &cudnn::enabled);
  c.def("set_cudnn_allow_tf32", &cudnn::set_allow_tf32);
  c.def("cudnn_allow_tf32", &cudnn::allow_tf32);
  c.def("set_cudnn_benchmark", &cudnn::set_benchmark);
  c.def("cudnn_benchmark", &cudnn::benchmark);
  c.def("set_cudnn_deterministic", &cudnn::set_deterministic);
  c.def("cudnn_deterministic", &cudnn::deterministic);

  py::class_<cuda::Stream>(c, "Stream", "A CUDA stream: work on it runs in order")
      .def(py::init([](py::handle device, int priority) {
             return cuda::get_stream_from_pool(priority < 0, device_index(device));
           }),
           "device"_a = py::none(), "priority"_a = 0)
      .def_property_readonly("device",
                             [](const cuda::Stream& s) { return Device(kCUDA, s.device()); })
      .def_property_readonly("cuda_stream", &cuda::Stream::handle)
      .def("query", &cuda::Stream::query)
      .def("synchronize",
           [](const cuda::Stream& s) {
             ReleaseGil no_gil;
             s.synchronize();
           })
      .def("wait_stream", &cuda::Stream::wait_stream, "stream"_a)
      .def("wait_event", &cuda::Stream::wait_event, "event"_a)
      .def(
          "record_event",
          [](const cuda::Stream& s, cuda::Event* e) {
            if (e == nullptr) {
              auto ev = std::make_unique<cuda::Event>();
              ev->record(s);
              return py::cast(std::move(ev));
            }
            e->record(s);
            return py::cast(e, py::return_value_policy::reference);
          },
          "event"_a = nullptr)
      .def("__eq__", [](const cuda::Stream& a, const cuda::Stream& b) { return a == b; })
      .def("__hash__",
           [](const cuda::Stream& s) { return std::hash<uintptr_t>()(s.handle()) ^ s.device(); })
      .def("__repr__", [](const cuda::Stream& s) {
        return "<ember.cuda.Stream device=cuda:" + std::to_string(s.device()) +
               " cuda_stream=" + std::to_string(s.handle()) + ">";
      });
  c.def(
      "current_stream", [](py::handle d) { return cuda::current_stream(device_index(d)); },
      "device"_a = py::none());
  c.def(
      "default_stream", [](py::handle d) { return cuda::default_stream(device_index(d)); },
      "device"_a = py::none());
  c.def("set_stream", &cuda::set_current_stream, "stream"_a);

  py::class_<cuda::Event>(c, "Event", "A point in a stream's work: record, wait, time")
      .def(py::init<bool, bool>(), "enable_timing"_a = false, "blocking"_a = false)
      .def(
          "record",
          [](cuda::Event& e, const cuda::Stream* s) {
            if (s)
              e.record(*s);
            else
              e.record();
          },
          "stream"_a = nullptr)
      .def(
          "wait",
          [](const cuda::Event& e, const cuda::Stream* s) {
            if (s)
              e.wait(*s);
            else
              e.wait();
          },
          "stream"_a = nullptr)
      .def("query", &cuda::Event::query)
      .def("synchronize",
           [](const cuda::Event& e) {
             ReleaseGil no_gil;
             e.synchronize();
           })
      .def("elapsed_time", &cuda::Event::elapsed_time, "end_event"_a);
}

}  // namespace ember::python
