// ember.profiler's core: the C++ Profile (ember/profiler/) and record_function's range. The
// schedule's actions, tables and traces are C++'s; python/ember/profiler/ gives them
// torch.profiler's classes and keywords.
#include <cstdlib>
#include <cstring>
#include <map>

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
  d["stack"] = a.stack;
  d["key"] = a.key;
  d["input_shapes"] = a.input_shapes;
  d["kind"] = profiler::kind_name(a.kind);
  d["count"] = a.count;
  d["cpu_time_total_ns"] = a.cpu_time_total_ns;
  d["self_cpu_time_total_ns"] = a.self_cpu_time_total_ns;
  d["cuda_time_total_ns"] = a.cuda_time_total_ns;
  d["self_cuda_time_total_ns"] = a.self_cuda_time_total_ns;
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
  d["stack"] = e.stack;
  d["on_device"] = e.on_device;
  d["id"] = e.id;
  d["launched_by"] = e.launched_by;
  return d;
}

CachingAllocator& allocator_of(const std::string& device) {
  Device d(device);
  return device_backend(d.type()).allocator(d.has_index() ? d.index() : 0);
}

// "file.py(12): name" frames as PyTorch's snapshot frames, {"filename", "line", "name"}.
py::list frame_dicts(const std::shared_ptr<const std::vector<std::string>>& frames) {
  py::list out;
  if (!frames) return out;
  for (const std::string& f : *frames) {
    py::dict d;
    size_t close = f.rfind("): "), open = f.rfind('(', close);
    bool parsed = close != std::string::npos && open != std::string::npos;
    d["filename"] = parsed ? f.substr(0, open) : f;
    d["line"] = parsed ? std::atoi(f.c_str() + open + 1) : 0;
    d["name"] = parsed ? f.substr(close + 3) : std::string();
    out.append(d);
  }
  return out;
}

// The allocator's state in PyTorch's snapshot format (torch.cuda.memory._snapshot): segments with
// their blocks ('history' on allocated blocks while history is recorded, as 1.13 writes it, read
// by torch.cuda._memory_viz) and the device's trace of events, with the Python frames of each
// allocation when history records stacks.
py::dict memory_snapshot(const std::string& device) {
  CachingAllocator& a = allocator_of(device);
  Device d(device);
  std::vector<TraceEntry> history = a.history();
  std::map<uintptr_t, const TraceEntry*> allocated_by;  // each address's latest allocation
  for (const TraceEntry& e : history)
    if (e.action == TraceEntry::Action::Alloc) allocated_by[e.addr] = &e;
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
      auto by = b.allocated ? allocated_by.find(b.address) : allocated_by.end();
      py::list frames = by != allocated_by.end() ? frame_dicts(by->second->frames) : py::list();
      block["frames"] = frames;
      if (b.allocated && !history.empty()) {
        py::dict h;
        h["addr"] = b.address;
        h["real_size"] = b.requested_size;
        h["frames"] = frames;
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
    t["frames"] = frame_dicts(e.frames);
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

// Only a thread that holds the GIL may read its frames: bindings that release it keep them first
// (ReleaseGil); threads without Python frames (the autograd engine's, DataParallel's replicas)
// have none.
std::vector<std::string> python_stack() {
  std::vector<std::string> frames;
  if (!Py_IsInitialized() || !PyGILState_Check()) return frames;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame && frames.size() < 128) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* name = PyUnicode_AsUTF8(code->co_name);
    // Installed packages by their own path ("torch/nn/modules/linear.py"), as PyTorch shows them.
    const char* packages = file ? std::strstr(file, "-packages/") : nullptr;
    if (packages) file = packages + std::strlen("-packages/");
    frames.push_back(std::string(file ? file : "?") + "(" +
                     std::to_string(PyFrame_GetLineNumber(frame)) + "): " + (name ? name : "?"));
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();  // a name that does not encode is "?", not an error for the op
  return frames;
}

void bind_profiler(py::module_& m) {
  py::module_ p = m.def_submodule("_profiler", "ember.profiler's C++ core");
  profiler::set_stack_provider(&python_stack);
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
          [](const profiler::Profile& prof, bool group_by_input_shape, int group_by_stack_n) {
            py::list out;
            for (const profiler::Average& a :
                 prof.key_averages(group_by_input_shape, group_by_stack_n))
              out.append(average_dict(a));
            return out;
          },
          "group_by_input_shape"_a = false, "group_by_stack_n"_a = 0)
      .def("table", &profiler::Profile::table, "sort_by"_a = "cpu_time_total", "row_limit"_a = -1,
           "group_by_input_shape"_a = false, "group_by_stack_n"_a = 0)
      .def("export_stacks", &profiler::Profile::export_stacks, "path"_a,
           "metric"_a = "self_cpu_time_total")
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
      [](const std::string& device, size_t max_entries, bool stacks) {
        allocator_of(device).record_history(max_entries, stacks);
      },
      "device"_a, "max_entries"_a, "stacks"_a = false);
  p.def("memory_snapshot", &memory_snapshot, "device"_a);
  p.def("cpu_device_count", &cpu::device_count);
}

}  // namespace ember::python
