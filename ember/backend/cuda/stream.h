// CUDA streams and events (torch.cuda.Stream / Event). GPU work is queued on the current stream of
// its device and runs in order there; work on two streams is ordered only by events.
// Handles are opaque here: only backend/cuda/*.cu and *.cpp include the CUDA headers.
#pragma once

#include <cstdint>

#include "ember/core/device.h"

namespace ember::cuda {

class Event;

class Stream {
 public:
  /// The stream with raw handle `handle` (a cudaStream_t) on `device`; handle 0 is the default.
  Stream(int device, uintptr_t handle) : device_(device), handle_(handle) {}
  int device() const { return device_; }
  uintptr_t handle() const { return handle_; }
  /// Whether all work queued so far has completed.
  bool query() const;
  /// Waits on the host for all work queued so far.
  void synchronize() const;
  /// Makes this stream wait (on the GPU) for the work queued on `other` so far.
  void wait_stream(const Stream& other) const;
  void wait_event(const Event& event) const;
  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  int device_;
  uintptr_t handle_;
};

/// The current stream of `device` (the current device when -1) for this thread.
Stream current_stream(int device = -1);
Stream default_stream(int device = -1);
void set_current_stream(const Stream& stream);
/// A stream from the device's pool (created once, handed out round-robin), optionally of high
/// priority. Pool streams do not synchronise implicitly with the default stream.
Stream get_stream_from_pool(bool high_priority = false, int device = -1);

/// Makes `stream` (and its device) current in its scope; restores both after.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  int previous_device_;
};

class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;

  /// Records the event at the current end of `stream` (the current stream by default).
  void record(const Stream& stream);
  void record();
  /// Makes `stream` wait on the GPU until the event has happened.
  void wait(const Stream& stream) const;
  void wait() const;
  /// Whether the event has happened (true if never recorded).
  bool query() const;
  /// Waits on the host until the event has happened.
  void synchronize() const;
  /// Milliseconds between this event and `end` (both recorded, timing enabled).
  float elapsed_time(const Event& end) const;
  uintptr_t handle() const { return handle_; }

 private:
  uintptr_t handle_ = 0;
  int device_ = -1;
  bool timing_ = false;
  bool blocking_ = false;
  void create(int device);
};

}  // namespace ember::cuda
