#include "ember/core/profiler_events.h"

#include <atomic>
#include <memory>
#include <utility>

namespace ember::profiler {
namespace {

// A small number per thread, in the order threads first record: the trace's lanes.
uint32_t thread_number() {
  static std::atomic<uint32_t> next{0};
  thread_local uint32_t mine = next++;
  return mine;
}

std::atomic<StackProvider> g_stack_provider{nullptr};
thread_local const std::vector<std::string>* t_caller_stack = nullptr;
std::atomic<CorrelationHook> g_correlation_hook{nullptr};
std::atomic<uint64_t> g_next_range_id{1};

}  // namespace

void set_stack_provider(StackProvider provider) { g_stack_provider.store(provider); }

void set_correlation_hook(CorrelationHook hook) { g_correlation_hook.store(hook); }

std::vector<std::string> current_stack() {
  if (t_caller_stack) return *t_caller_stack;
  StackProvider provider = g_stack_provider.load();
  return provider ? provider() : std::vector<std::string>{};
}

CallerStack::CallerStack(std::vector<std::string> frames)
    : frames_(std::move(frames)), saved_(t_caller_stack) {
  t_caller_stack = &frames_;
}

CallerStack::~CallerStack() { t_caller_stack = saved_; }

const char* kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Op:
      return "op";
    case EventKind::Backward:
      return "backward";
    case EventKind::User:
      return "user_annotation";
    case EventKind::Optimizer:
      return "optimizer";
    case EventKind::DataLoader:
      return "dataloader";
    case EventKind::Collective:
      return "collective";
    case EventKind::Memory:
      return "memory";
    case EventKind::Memcpy:
      return "memcpy";
    case EventKind::Kernel:
      return "kernel";
  }
  return "op";
}

Session* Session::open(SessionOptions options) {
  // See Note [Sessions outlive their profiles].
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Session>> sessions;
  std::lock_guard<std::mutex> lock(mutex);
  sessions.push_back(std::unique_ptr<Session>(new Session(options)));
  return sessions.back().get();
}

void Session::add(Event&& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recording()) events_.push_back(std::move(event));
}

std::vector<Event> Session::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::vector<Event> Session::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Event> out;
  out.swap(events_);
  return out;
}

void Session::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
}

void RecordScope::begin(EventKind kind, std::string name) {
  event_.name = std::move(name);
  event_.kind = kind;
  event_.thread = thread_number();
  if (session_->options().with_stack) event_.stack = current_stack();
  hook_ = g_correlation_hook.load(std::memory_order_acquire);
  if (hook_) {
    event_.id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
    hook_(event_.id, true);
  }
  event_.start_ns = now_ns();
}

void RecordScope::end() {
  event_.end_ns = now_ns();
  if (hook_) hook_(event_.id, false);
  session_->add(std::move(event_));
}

void record_memory(Device device, int64_t bytes, int64_t total_allocated) {
  Session* s = active_session();
  if (!s || !s->options().profile_memory) return;
  Event e;
  e.name = "[memory]";
  e.kind = EventKind::Memory;
  e.thread = thread_number();
  e.start_ns = e.end_ns = now_ns();
  e.device = device;
  e.bytes = bytes;
  e.total_allocated = total_allocated;
  s->add(std::move(e));
}

}  // namespace ember::profiler
