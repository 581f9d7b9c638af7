// ember.profiler's core: the C++ Profile (ember/profiler/) and record_function's range. The
// schedule's actions, tables and traces are C++'s; python/ember/profiler/ gives them
// torch.profiler's classes and keywords.
#include "bind.h"

#include "ember/backend/cpu/cpu_device.h"
#include "ember/core/caching_allocator.h"
#include "ember/core/device_backend.h"
#include "ember/profiler/profiler.h"

namespace ember::python {
namespace {

// A record_function range between __enter__ and __exit__ (on the entering thread).
struct UserRange {
  std::string name;
  std::unique_ptr<profiler::RecordFunction> range;
};

py::dict average_dict(const profiler::Average& a) {
  py::dict d;
  d["key"] = a.key;
  d["input_shapes"] = a.input_shapes;
  d["kind"] = profiler::kind_name(a.kind);
  d["count"] = a.count;
  d["cpu_time_total_ns"] = a.cpu_time_total_ns;
  d["self_cpu_time_total_ns"] = a.self_cpu_time_total_ns;
  d["cpu_memory_usage"] = a.cpu_memory_usage;
  d["self_cpu_memory_usage"] = a.self_cpu_memory_usage;
  return d;
}

py::dict event_dict(const profiler::Event& e) {
  py::dict d;
  d["name"] = e.name;
  d["kind"] = profiler::kind_name(e.kind);
  d["start_ns"] = e.start_ns;
  d["end_ns"] = e.end_ns;
  d["thread"] = e.thread;
  d["sequence_nr"] = e.sequence_nr;
  d["device"] = e.device.str();
  d["input_shapes"] = e.shapes;
  d["input_types"] = e.dtypes;
  d["bytes"] = e.bytes;
  return d;
}

CachingAllocator& allocator_of(const std::string& device) {
  Device d(device);
  return device_backend(d.type()).allocator(d.has_index() ? d.index() : 0);
}

// The allocator's state in PyTorch's snapshot format (torch.cuda.memory._snapshot): segments with
// their blocks ('history' on allocated blocks while history is recorded, as 1.13 writes it, read
// by torch.cuda._memory_viz) and the device's trace of events. No Python frames are recorded.
py::dict memory_snapshot(const std::string& device) {
  CachingAllocator& a = allocator_of(device);
  Device d(device);
  std::vector<TraceEntry> history = a.history();
  py::list segments;
  for (const SegmentInfo& seg : a.snapshot()) {
    py::list blocks;
    size_t requested = 0;
    for (const BlockInfo& b : seg.blocks) {
      py::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.allocated ? "active_allocated"
                       : b.active  ? "active_pending_free"
                                   : "inactive";
      block["frames"] = py::list();
      if (b.allocated && !history.empty()) {
        py::dict h;
        h["addr"] = b.address;
        h["real_size"] = b.requested_size;
        h["frames"] = py::list();
        py::list hl;
        hl.append(h);
        block["history"] = hl;
      }
      requested += b.requested_size;
      blocks.append(block);
    }
    py::dict s;
    s["device"] = d.has_index() ? d.index() : 0;
    s["address"] = seg.address;
    s["total_size"] = seg.total_size;
    s["allocated_size"] = seg.allocated_size;
    s["active_size"] = seg.active_size;
    s["requested_size"] = requested;
    s["stream"] = seg.stream;
    s["segment_type"] = seg.is_large ? "large" : "small";
    s["frames"] = py::list();
    s["blocks"] = blocks;
    segments.append(s);
  }
  py::list trace;
  for (const TraceEntry& e : history) {
    py::dict t;
    t["action"] = action_name(e.action);
    t["addr"] = e.addr;
    t["size"] = e.size;
    t["stream"] = e.stream;
    t["time_us"] = e.time_us;
    t["frames"] = py::list();
    trace.append(t);
  }
  py::dict out;
  out["segments"] = segments;
  py::list traces;
  traces.append(trace);
  out["device_traces"] = traces;
  return out;
}

}  // namespace

void bind_profiler(py::module_& m) {
  py::module_ p = m.def_submodule("_profiler", "ember.profiler's C++ core");
  py::class_<profiler::Profile>(p, "Profile")
      .def(py::init([](bool record_shapes, bool profile_memory, bool with_stack,
                       std::optional<std::vector<int>> schedule, py::object on_trace_ready) {
             profiler::ProfileOptions o;
             o.record_shapes = record_shapes;
             o.profile_memory = profile_memory;
             o.with_stack = with_stack;
             if (schedule) {
               if (schedule->size() != 5)
                 throw py::value_error(
                     "schedule: expected (wait, warmup, active, repeat, "
                     "skip_first)");
               const std::vector<int>& s = *schedule;
               o.schedule = profiler::Schedule{s[0], s[1], s[2], s[3], s[4]};
             }
             if (!on_trace_ready.is_none())
               o.on_trace_ready = [on_trace_ready](profiler::Profile&) {
                 py::gil_scoped_acquire gil;
                 on_trace_ready();
               };
             return std::make_unique<profiler::Profile>(std::move(o));
           }),
           "record_shapes"_a = false, "profile_memory"_a = false, "with_stack"_a = false,
           "schedule"_a = py::none(), "on_trace_ready"_a = py::none())
      .def("start", &profiler::Profile::start)
      .def("stop", &profiler::Profile::stop)
      .def("step", &profiler::Profile::step)
      .def_property_readonly("step_num", &profiler::Profile::step_num)
      .def("events",
           [](const profiler::Profile& prof) {
             py::list out;
             for (const profiler::Event& e : prof.events()) out.append(event_dict(e));
             return out;
           })
      .def(
          "key_averages",
          [](const profiler::Profile& prof, bool group_by_input_shape) {
            py::list out;
            for (const profiler::Average& a : prof.key_averages(group_by_input_shape))
              out.append(average_dict(a));
            return out;
          },
          "group_by_input_shape"_a = false)
      .def("table", &profiler::Profile::table, "sort_by"_a = "cpu_time_total", "row_limit"_a = -1,
           "group_by_input_shape"_a = false)
      .def("chrome_trace", &profiler::Profile::chrome_trace)
      .def("export_chrome_trace", &profiler::Profile::export_chrome_trace, "path"_a);

  py::class_<UserRange>(p, "UserRange")
      .def(py::init([](std::string name) {
             return UserRange{std::move(name), nullptr};
           }),
           "name"_a)
      .def("enter",
           [](UserRange& r) { r.range = std::make_unique<profiler::RecordFunction>(r.name); })
      .def("exit", [](UserRange& r) { r.range.reset(); });
  p.def("is_recording", [] { return profiler::active_session() != nullptr; });
  p.def(
      "record_memory_history",
      [](const std::string& device, size_t max_entries) {
        allocator_of(device).record_history(max_entries);
      },
      "device"_a, "max_entries"_a);
  p.def("memory_snapshot", &memory_snapshot, "device"_a);
  p.def("cpu_device_count", &cpu::device_count);
}

}  // namespace ember::python
