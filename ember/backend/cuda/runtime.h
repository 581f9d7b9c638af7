// Internal to the CUDA backend: the CUDA runtime headers, launch checks and per-device state.
// Nothing outside backend/cuda/ includes this file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ember/backend/cuda/stream.h"
#include "ember/core/caching_allocator.h"
#include "ember/core/error.h"

namespace ember::cuda {

/// The current stream of `device` as a cudaStream_t.
inline cudaStream_t raw_stream(int device) {
  return reinterpret_cast<cudaStream_t>(current_stream(device).handle());
}

/// Whether EMBER_CUDA_SYNC=1 asked for a synchronisation after every kernel.
bool sync_after_every_op();

/// Checks a launch; with EMBER_CUDA_SYNC=1 also waits for it, so that a fault points at its op.
void check_launch(const char* kernel, const char* file, int line);

/// Switches the current device for a scope (cheap when it is already current).
class RawDeviceGuard {
 public:
  explicit RawDeviceGuard(int device);
  ~RawDeviceGuard();
  RawDeviceGuard(const RawDeviceGuard&) = delete;
  RawDeviceGuard& operator=(const RawDeviceGuard&) = delete;

 private:
  int previous_;
};

/// The caching allocator's name for a stream of `device`. A created stream's handle names it; the
/// default stream's handle (0) is the same on every device, so its id carries the device.
StreamId stream_id(int device, uintptr_t handle);
/// The stream an id names, and the device it belongs to.
cudaStream_t stream_of(StreamId id);
int device_of(StreamId id);

/// What a kernel entry point launches with: `device` made current for the scope (a launch goes to
/// the current device, and stream 0 means the current device's default stream) and that device's
/// current stream. Entry points take one before touching a stream.
class LaunchScope {
 public:
  explicit LaunchScope(int device) : guard_(device), stream(raw_stream(device)) {}

 private:
  RawDeviceGuard guard_;  // first: the stream is looked up with the device already current

 public:
  const cudaStream_t stream;
};

/// Memory used by work on CUDA streams (device memory, pinned host memory): the caching allocator
/// reuses a block only after the events recorded on the streams that used it have passed.
class StreamOrderedMemory : public DeviceMemory {
 public:
  void* record_event(StreamId stream) override;
  bool query_event(void* event) override;
  void destroy_event(void* event) noexcept override;
  void synchronize_event(void* event) override;

 protected:
  /// What an allocation call returned: `p`, or nullptr when the device is out of memory (the
  /// caching allocator then empties its cache and retries); any other error throws.
  static void* allocated_or_null(cudaError_t err, void* p);
};

}  // namespace ember::cuda

#define EMBER_CUDA_LAUNCH_CHECK(name) ::ember::cuda::check_launch(name, __FILE__, __LINE__)
