// The profiler's view of the GPUs (DeviceBackend::start_activity / stop_activity): CUPTI's activity
// API, as PyTorch's Kineto uses it. CUPTI fills buffers with a record per kernel, copy and memset,
// timed by the device; each profiled range (op, backward node, record_function) pushes its id as
// an external correlation id while it runs, so CUPTI also records which range launched what.
#include "ember/backend/cuda/activity.h"

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>

#include "ember/backend/cuda/runtime.h"

namespace ember::cuda {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBufferAlign = 8;  // CUPTI's ACTIVITY_RECORD_ALIGNMENT

struct Collected {
  std::mutex mutex;
  std::vector<profiler::Event> events;
  std::map<uint32_t, uint64_t> range_of;  // CUPTI correlation id -> the range that launched it
  int64_t steady_minus_cupti_ns = 0;      // adds to CUPTI's timestamps to give now_ns()'s clock
  bool registered = false;
};
Collected& collected() {
  static Collected* c = new Collected();  // CUPTI may call back during exit
  return *c;
}

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* what = nullptr;
  cuptiGetResultString(r, &what);
  EMBER_FAIL("[profiler] CUPTI's ", call, " failed: ", what ? what : "unknown error",
             r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                 ? " (profiling GPUs needs NVreg_RestrictProfilingToAdminUsers=0 or root)"
                 : "");
}

std::string demangled(const char* name) {
  if (!name) return "(unnamed kernel)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                           std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

const char* copy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD (device)";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH (device)";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD (device)";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "Memcpy HtoH (device)";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP (device)";
    default:
      return "Memcpy (device)";
  }
}

// A kernel's, copy's or memset's record as a device event. launched_by holds CUPTI's correlation
// id of the API call that made it until stop_activity maps that to a range.
template <typename Record>
profiler::Event device_event(profiler::EventKind kind, std::string name, const Record& r) {
  profiler::Event e;
  e.kind = kind;
  e.name = std::move(name);
  e.on_device = true;
  e.start_ns = static_cast<int64_t>(r.start) + collected().steady_minus_cupti_ns;
  e.end_ns = static_cast<int64_t>(r.end) + collected().steady_minus_cupti_ns;
  e.device = Device(DeviceType::CUDA, static_cast<int>(r.deviceId));
  e.thread = r.streamId;
  e.launched_by = r.correlationId;
  return e;
}

void take(const CUpti_Activity* record, Collected& c) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      c.events.push_back(device_event(profiler::EventKind::Kernel, demangled(k->name), *k));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      c.events.push_back(device_event(profiler::EventKind::Memcpy, copy_name(m->copyKind), *m));
      c.events.back().bytes = static_cast<int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      c.events.push_back(device_event(profiler::EventKind::Kernel, "Memset (device)", *m));
      c.events.back().bytes = static_cast<int64_t>(m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        c.range_of[x->correlationId] = x->externalId;
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collected& c = collected();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) take(record, c);
  }
  std::free(buffer);
}

// The correlation hook (profiler_events.h): CUPTI keeps a stack of external ids per thread.
void correlate(uint64_t id, bool enter) {
  if (enter) {
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
  } else {
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                         // CUPTI writes an external-correlation record only
                                         // before an API record: without these kinds it writes
                                         // none, and no kernel is linked to its op (seen on the
                                         // H200). The driver's too, as cuBLAS launches there.
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

}  // namespace

void start_activity() {
  Collected& c = collected();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.events.clear();
    c.range_of.clear();
    if (!c.registered) {
      check(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed),
            "cuptiActivityRegisterCallbacks");
      c.registered = true;
    }
    uint64_t cupti_now = 0;
    check(cuptiGetTimestamp(&cupti_now), "cuptiGetTimestamp");
    c.steady_minus_cupti_ns = profiler::now_ns() - static_cast<int64_t>(cupti_now);
  }
  for (CUpti_ActivityKind kind : kKinds) check(cuptiActivityEnable(kind), "cuptiActivityEnable");
  profiler::set_correlation_hook(&correlate);
}

std::vector<profiler::Event> stop_activity() {
  profiler::set_correlation_hook(nullptr);
  // What was launched has to finish before CUPTI can hand over its records.
  for (int d = 0; d < discovery().count; ++d) {
    RawDeviceGuard guard(d);
    EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  }
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::vector<profiler::Event> out;
  out.swap(c.events);
  for (profiler::Event& e : out) {
    auto it = c.range_of.find(static_cast<uint32_t>(e.launched_by));
    e.launched_by = it != c.range_of.end() ? it->second : 0;
  }
  c.range_of.clear();
  return out;
}

}  // namespace ember::cuda
