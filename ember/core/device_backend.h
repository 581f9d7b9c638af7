// What core needs to know about a kind of device: how many there are, which is current, and the
// allocator of each. Each backend implements it (backend/cpu/cpu_device.cpp, backend/cuda/...);
// a build without CUDA gets a stand-in whose every call says so.
#pragma once

#include <string>
#include <vector>

#include "ember/core/caching_allocator.h"
#include "ember/core/device.h"
#include "ember/core/profiler_events.h"

namespace ember {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual int device_count() = 0;
  virtual int current_device() = 0;
  virtual void set_device(int index) = 0;
  virtual CachingAllocator& allocator(int index) = 0;
  /// Why no device of this type can be used ("" when some can).
  virtual std::string unavailable_reason() = 0;
  /// Waits for all work queued on the device.
  virtual void synchronize(int index) = 0;
  /// The calling thread's current stream on the device (0 where the device has no streams).
  virtual uintptr_t current_stream(int index) { return 0; }
  virtual void set_current_stream(int index, uintptr_t stream) {}
  /// Makes `stream` wait for the work queued so far on `other` (both on device `index`).
  virtual void stream_wait(int index, uintptr_t stream, uintptr_t other) {}
  /// The profiler's record of the devices' own activity (kernels, copies, memsets, with the
  /// devices' times, each linked to the range that launched it): started when a profile asking
  /// for it starts recording, handed over as events when it stops. Devices without one: none.
  virtual void start_activity() {}
  virtual std::vector<profiler::Event> stop_activity() { return {}; }
};

/// The backend of `type`; defined in backend/device_backends.cpp.
DeviceBackend& device_backend(DeviceType type);

}  // namespace ember
