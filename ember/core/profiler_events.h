// What the profiler records and where it records it: a Session that collects Events, switched on
// per thread through ThreadLocalState (so the threads ember starts for the caller record into the
// same session), and RecordScope, the guard that times one event. The op entry (ops/op_entry.h),
// the autograd engine, optimizers, the DataLoader and the process groups open RecordScopes; the
// tables and traces over a session's events are ember/profiler/.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/device.h"
#include "ember/core/thread_local_state.h"

namespace ember::profiler {

/// What an event is; the trace viewer colours and the tables group by it.
enum class EventKind : uint8_t {
  Op,          // a public op, from its entry line
  Backward,    // an autograd node's backward
  User,        // record_function
  Optimizer,   // Optimizer.step
  DataLoader,  // waiting for the next batch
  Collective,  // a process group's collective, from its call to its completion being waited for
  Memory,      // an allocation or a release (instant; bytes > 0 allocates, < 0 frees)
  Memcpy,      // a copy between devices ("Memcpy HtoD", ...), with its bytes
  Kernel,      // a device's own activity: a kernel or memset, with the device's times
};
const char* kind_name(EventKind kind);

/// One timed event. Times are nanoseconds of the steady clock.
struct Event {
  std::string name;
  EventKind kind = EventKind::Op;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread = 0;       // the session's number for the recording thread, from 0
  int64_t sequence_nr = -1;  // links an op to the backward of the node it made (PyTorch's)
  Device device{DeviceType::CPU, 0};
  std::string shapes;           // "[[2, 3], [3]]", with record_shapes
  std::string dtypes;           // "[float32, float32]", with record_shapes
  int64_t bytes = 0;            // collectives, Memcpy; Memory events: + allocated, - freed
  int64_t total_allocated = 0;  // Memory events: the device's allocated bytes after this one
  std::vector<std::string> stack;  // with_stack: the caller's frames, innermost first
  // Device activity (DeviceBackend::stop_activity): Kernel events, and Memcpy events timed on the
  // device, are `on_device`; their `thread` is the stream. `launched_by` is the id of the range
  // (op, backward node, record_function) that launched them: ranges get ids while a device
  // records its activity.
  bool on_device = false;
  uint64_t id = 0;
  uint64_t launched_by = 0;
};

struct SessionOptions {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
};

/// The frames of the code that called into ember on this thread, innermost first, as
/// "file.py(12): forward", for with_stack. ember's Python package provides them: it holds the
/// caller's frames in a CallerStack while an op runs without the GIL, and installs a provider for
/// code that runs with it. C++ callers have none (as in libtorch, whose with_stack records Python
/// frames only).
using StackProvider = std::vector<std::string> (*)();
void set_stack_provider(StackProvider provider);
/// The innermost CallerStack's frames on this thread, else the provider's, else none.
std::vector<std::string> current_stack();

/// Holds `frames` as this thread's caller stack for its scope.
class CallerStack {
 public:
  explicit CallerStack(std::vector<std::string> frames);
  ~CallerStack();
  CallerStack(const CallerStack&) = delete;
  CallerStack& operator=(const CallerStack&) = delete;

 private:
  std::vector<std::string> frames_;
  const std::vector<std::string>* saved_;
};

/// The events of one profile. Thread-safe: every thread the session reaches adds to it.
///
/// Note [Sessions outlive their profiles]: threads ember starts carry the session pointer in
/// their ThreadLocalState (a DataLoader's workers, for a whole epoch), and may still hold it after
/// the profile ended. So sessions are made by open() and never freed: a profile that ends stops
/// the session recording and empties it, and a late event from such a thread is dropped.
class Session {
 public:
  /// A new session, alive until the process ends (small once closed).
  static Session* open(SessionOptions options);
  const SessionOptions& options() const { return options_; }
  bool recording() const { return recording_.load(std::memory_order_relaxed); }
  /// Starts (true) or stops (false) taking events.
  void set_recording(bool on) { recording_.store(on, std::memory_order_relaxed); }
  /// Adds `event` while recording; drops it otherwise.
  void add(Event&& event);
  /// The events so far, in the order they ended.
  std::vector<Event> events() const;
  /// Hands over the events so far and empties the session.
  std::vector<Event> take();
  /// Drops the events so far (a schedule's warm-up steps).
  void clear();

 private:
  explicit Session(SessionOptions options) : options_(options) {}
  SessionOptions options_;
  std::atomic<bool> recording_{false};
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The session this thread records into, or null: one thread-local load (and a relaxed one
/// when there is a session).
inline Session* active_session() {
  Session* s = detail::t_local_state.profiler;
  return s && s->recording() ? s : nullptr;
}

namespace stack_detail {
inline std::atomic<int> g_recorders{0};
}  // namespace stack_detail

/// A recorder of stacks outside profiles (an allocator's history with stacks) starts (+1) or stops
/// (-1) wanting them.
inline void add_stack_recorder(int delta) { stack_detail::g_recorders.fetch_add(delta); }

/// Whether anything records stacks on this thread now: a binding's cue to keep its caller's
/// frames (CallerStack) before it runs ops without the GIL.
inline bool wants_stack() {
  if (stack_detail::g_recorders.load(std::memory_order_relaxed) > 0) return true;
  Session* s = active_session();
  return s && s->options().with_stack;
}

/// While a device records its activity (DeviceBackend::start_activity), the hook it installs here
/// is told as each recorded range opens (enter) and closes on this thread, with the range's id, so
/// that the device can link what the range launches to it.
using CorrelationHook = void (*)(uint64_t id, bool enter);
void set_correlation_hook(CorrelationHook hook);

/// Records into `session` on this thread for its scope (then puts back what was there).
class SessionGuard {
 public:
  explicit SessionGuard(Session* session) : saved_(detail::t_local_state.profiler) {
    detail::t_local_state.profiler = session;
  }
  ~SessionGuard() { detail::t_local_state.profiler = saved_; }
  SessionGuard(const SessionGuard&) = delete;
  SessionGuard& operator=(const SessionGuard&) = delete;

 private:
  Session* saved_;
};

/// Times one event from construction to destruction, when a session records on this thread;
/// otherwise it costs one thread-local load.
class RecordScope {
 public:
  RecordScope(EventKind kind, const char* name) : session_(active_session()) {
    if (session_) begin(kind, name);
  }
  RecordScope(EventKind kind, const std::string& name) : session_(active_session()) {
    if (session_) begin(kind, name);
  }
  ~RecordScope() {
    if (session_) end();
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

  bool active() const { return session_ != nullptr; }
  bool record_shapes() const { return session_ && session_->options().record_shapes; }
  /// Only while active().
  Event& event() { return event_; }

 private:
  void begin(EventKind kind, std::string name);
  void end();
  Session* session_;
  CorrelationHook hook_ = nullptr;  // the one told at begin, told again at end
  Event event_;
};

/// An instant Memory event: the allocator's hook, when profile_memory records on this thread.
void record_memory(Device device, int64_t bytes, int64_t total_allocated);

}  // namespace ember::profiler
