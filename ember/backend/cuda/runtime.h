// Internal to the CUDA backend: the CUDA runtime headers, launch checks and per-device state.
// Nothing outside backend/cuda/ includes this file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "ember/backend/cuda/stream.h"
#include "ember/core/caching_allocator.h"
#include "ember/core/error.h"

namespace ember::cuda {

/// The current stream of `device` as a cudaStream_t.
inline cudaStream_t raw_stream(int device) {
  return reinterpret_cast<cudaStream_t>(current_stream(device).handle());
}

/// What CUDA reported when it started: the visible devices, or 0 and the reason (no driver, no
/// device, a bad CUDA_VISIBLE_DEVICES), and CUDA_VISIBLE_DEVICES as it was then.
struct Discovery {
  int count = 0;
  std::string reason;
  std::string visible;
  uint64_t fork_generation = 0;  // of the process that started CUDA (core/fork.h)
};
const Discovery& discovery();

/// Whether this process was forked after CUDA started in its parent (CUDA is unusable here), and
/// the error that says so, naming `op`; check_index makes that check too.
bool forked_after_start();
void check_not_forked(const char* op);

/// `device` checked against the visible devices, or the current device when -1; `op` names the
/// caller in errors.
int check_index(int device, const char* op);

/// For the calls that can answer "not yet" (cudaEventQuery, cudaStreamQuery): true when the work
/// is done, false when it is not (the error is cleared); any other error throws naming `call`.
bool is_done(cudaError_t err, const char* call, const char* file, int line);
#define EMBER_CUDA_IS_DONE(expr) ::ember::cuda::is_done((expr), #expr, __FILE__, __LINE__)

/// Makes `device` current and returns the previous device, or -1 when it was current already;
/// restore_device(previous) undoes it. The guards below are built on these two.
int exchange_device(int device);
void restore_device(int previous) noexcept;

/// Whether EMBER_CUDA_SYNC=1 asked for a synchronisation after every kernel.
bool sync_after_every_op();

/// Checks a launch; with EMBER_CUDA_SYNC=1 also waits for it, so that a fault points at its op.
void check_launch(const char* kernel, const char* file, int line);

/// Switches the current device for a scope (cheap when it is already current).
class RawDeviceGuard {
 public:
  explicit RawDeviceGuard(int device) : previous_(exchange_device(device)) {}
  ~RawDeviceGuard() { restore_device(previous_); }
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
  /// caching allocator then empties its cache and retries); any other error throws. Call the
  /// allocation first, as its own statement: in `allocated_or_null(cudaMalloc(&p, n), p)` the
  /// compiler may read `p` before cudaMalloc writes it (GCC did, so every allocation looked like
  /// an out-of-memory on the first GPU run).
  static void* allocated_or_null(cudaError_t err, void* p);
};

}  // namespace ember::cuda

#define EMBER_CUDA_LAUNCH_CHECK(name) ::ember::cuda::check_launch(name, __FILE__, __LINE__)
