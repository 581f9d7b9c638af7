// The per-thread settings a user sets with a guard (grad mode, autocast), kept in one place so
// that work ember hands to another thread can carry them there (c10's ThreadLocalState).
#pragma once

#include "ember/core/device.h"
#include "ember/core/dtype.h"

namespace ember {
namespace profiler {
class Session;
}
class OpCapture;

/// Autocast's settings for each device type (core/autocast.h is the API over them).
struct AutocastState {
  bool enabled[kNumDeviceTypes] = {false, false};
  DType dtype[kNumDeviceTypes] = {kBFloat16, kFloat16};  // PyTorch's defaults: cpu, cuda
  bool cache_enabled = true;
};

namespace detail {
// Note [What thread-local state travels]
// Only what a user sets to change how ops behave or what they record travels: grad mode,
// autocast, the profiler's session and the op capture (so that DataParallel's replicas, DataLoader
// workers and run_threads' ranks record into the caller's profile or capture). The other
// thread_locals stay where they are because they describe the thread itself, not the user's
// intent: the pool's "inside a parallel region" flag (thread_pool.cpp), the backward pass running
// on this thread (engine.cpp), the saved-tensor count of the op being recorded
// (autograd_support.h), the current CUDA streams (each device's thread picks its own, as in
// PyTorch), a rank-as-thread's process group (distributed.cpp), and Module's skip-init flag while
// cloning (module.cpp). Each is set and restored by the code that owns it.
struct LocalState {
  bool grad_enabled = true;
  AutocastState autocast;
  profiler::Session* profiler = nullptr;  // the session recording this thread's events, if any
  OpCapture* capture = nullptr;           // the capture recording this thread's ops (ops/capture.h)
};
// Constant-initialised and trivially destructible: reading it is one thread-local load, with no
// initialisation check, which matters because every op reads grad mode.
inline thread_local LocalState t_local_state;
}  // namespace detail

/// A snapshot of this thread's grad mode, autocast settings and profiler session, to apply on
/// another thread:
///   ThreadLocalState state = ThreadLocalState::capture();
///   std::thread worker([state] { ThreadLocalStateGuard guard(state); ... });
/// parallel_apply, DataLoader workers and the ranks of run_threads do this for the threads they
/// start. See Note [What thread-local state travels] for what is included.
class ThreadLocalState {
 public:
  /// The calling thread's settings now.
  static ThreadLocalState capture() { return ThreadLocalState(detail::t_local_state); }
  bool grad_enabled() const { return state_.grad_enabled; }
  const AutocastState& autocast() const { return state_.autocast; }

 private:
  friend class ThreadLocalStateGuard;
  explicit ThreadLocalState(const detail::LocalState& s) : state_(s) {}
  detail::LocalState state_;
};

/// Applies a captured state to this thread for its scope, then puts back what was there.
class ThreadLocalStateGuard {
 public:
  explicit ThreadLocalStateGuard(const ThreadLocalState& state) : saved_(detail::t_local_state) {
    detail::t_local_state = state.state_;
  }
  ~ThreadLocalStateGuard() { detail::t_local_state = saved_; }
  ThreadLocalStateGuard(const ThreadLocalStateGuard&) = delete;
  ThreadLocalStateGuard& operator=(const ThreadLocalStateGuard&) = delete;

 private:
  detail::LocalState saved_;
};

}  // namespace ember
