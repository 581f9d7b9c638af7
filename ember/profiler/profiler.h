// ember::profiler: torch.profiler's API over the events of core/profiler_events.h. A Profile
// records the ops (from their entry line), backward nodes, record_function ranges, optimizer
// steps, DataLoader waits, collectives and, with profile_memory, allocations of the thread that
// starts it and of the threads ember starts for that thread; then it averages them into a table
// and writes a Chrome trace (chrome://tracing, Perfetto).
//
//   ember::profiler::Profile prof({.record_shapes = true});
//   prof.start();
//   { ember::profiler::RecordFunction r("forward"); model.forward(x); }
//   prof.stop();
//   std::cout << prof.table("self_cpu_time_total", 10);
//   prof.export_chrome_trace("trace.json");
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/profiler_events.h"

namespace ember::profiler {

enum class ProfilerActivity { CPU, CUDA };

/// What a schedule does at a step (torch.profiler.ProfilerAction).
enum class ProfilerAction { None, Warmup, Record, RecordAndSave };

/// torch.profiler.schedule: skip_first steps, then cycles of `wait` idle, `warmup` (recording,
/// thrown away) and `active` recorded steps, `repeat` times (0: until the profile stops). The
/// last active step of a cycle hands the cycle's events to on_trace_ready.
struct Schedule {
  int wait = 0;
  int warmup = 0;
  int active = 1;
  int repeat = 0;
  int skip_first = 0;
  ProfilerAction at(int step) const;
};

class Profile;

struct ProfileOptions {
  std::vector<ProfilerActivity> activities = {ProfilerActivity::CPU};
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;  // each event keeps its caller's frames (current_stack())
  std::optional<Schedule> schedule;
  std::function<void(Profile&)> on_trace_ready;
};

/// One row of key_averages: the events of one name (and input shapes, when grouped by them).
/// With ProfilerActivity::CUDA on a GPU, kernels, device copies and memsets are rows of their own
/// (device times), and each range's row has the device time of what it launched.
struct Average {
  std::string key;
  std::string input_shapes;
  std::vector<std::string> stack;  // the first group_by_stack_n frames, when grouped by them
  EventKind kind = EventKind::Op;
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0;
  int64_t self_cpu_time_total_ns = 0;
  int64_t cuda_time_total_ns = 0;       // device time of what it launched (nested ranges too)
  int64_t self_cuda_time_total_ns = 0;  // ... launched directly; a kernel's row: its own time
  int64_t cpu_memory_usage = 0;       // bytes allocated minus freed inside, with profile_memory
  int64_t self_cpu_memory_usage = 0;  // the same, outside nested events
};

class Profile {
 public:
  explicit Profile(ProfileOptions options = {});
  /// Stops recording if it still does.
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  /// Starts recording on this thread (with a schedule: as the schedule says, from step 0).
  void start();
  /// Stops recording; with a schedule, an unfinished active cycle goes to on_trace_ready.
  void stop();
  /// The end of a training step: moves the schedule on. Each step is a range of its own in the
  /// profile, "ProfilerStep#N", as in PyTorch.
  void step();
  int step_num() const { return step_num_; }

  /// The events of the last finished cycle (with a schedule) or of the whole run.
  std::vector<Event> events() const;
  /// The events' averages by name (and by input shapes, and by their innermost
  /// group_by_stack_n frames, when asked), in order of first appearance.
  std::vector<Average> key_averages(bool group_by_input_shape = false,
                                    int group_by_stack_n = 0) const;
  /// key_averages as torch.profiler's table: sort_by one of cpu_time_total, self_cpu_time_total,
  /// cpu_time (average), count, cpu_memory_usage, self_cpu_memory_usage; row_limit -1: all.
  /// Grouped by stack, a "Source Location" column lists each row's frames, one per line.
  std::string table(const std::string& sort_by = "cpu_time_total", int row_limit = -1,
                    bool group_by_input_shape = false, int group_by_stack_n = 0) const;
  /// The events with stacks as flame-graph input (torch.profiler's export_stacks: one line per
  /// event, "outer;...;inner microseconds", metric self_cpu_time_total or cpu_time_total).
  std::string stacks(const std::string& metric = "self_cpu_time_total") const;
  void export_stacks(const std::string& path,
                     const std::string& metric = "self_cpu_time_total") const;
  /// The events as a Chrome trace (JSON, ts and dur in microseconds, one lane per thread).
  void export_chrome_trace(const std::string& path) const;
  std::string chrome_trace() const;

 private:
  bool recording() const { return guard_.has_value(); }
  void begin_recording();
  void end_recording();   // hands the events to finished_ and on_trace_ready
  void drop_recording();  // throws them away
  bool wants_device_activity() const;
  ProfileOptions options_;
  bool device_activity_ = false;  // the CUDA backend records kernels while recording
  Session* session_;  // recording while guard_ holds it on the profiling thread
  std::optional<SessionGuard> guard_;
  std::optional<RecordScope> step_range_;  // "ProfilerStep#N", as PyTorch marks each step
  std::vector<Event> finished_;  // the events handed out by events() once recording stopped
  bool running_ = false;
  int step_num_ = 0;
};

/// Events averaged by name (and by input shapes and innermost frames when asked), in order of
/// first appearance; self times less the events nested inside, on the same thread.
/// Profile::key_averages over its events.
std::vector<Average> averages(const std::vector<Event>& events, bool group_by_input_shape = false,
                              int group_by_stack_n = 0);

/// A range of the caller's own in the profile (torch.profiler.record_function).
class RecordFunction {
 public:
  explicit RecordFunction(const std::string& name) : scope_(EventKind::User, name) {}

 private:
  RecordScope scope_;
};

/// "1.234ms", "12.000us", "3.500s": torch.profiler's time format.
std::string format_time_ns(int64_t ns);
/// "1.50 Mb", "12 b": torch.profiler's memory format.
std::string format_memory(int64_t bytes);

}  // namespace ember::profiler
