#include "ember/profiler/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "ember/core/device_backend.h"
#include "ember/core/error.h"

namespace ember::profiler {
namespace {

// Self times and memory: within each thread, an event's parent is the innermost event that
// encloses it (ops nest: linear holds addmm); its self time is its duration less its children's.
// Device time: a range's device events (on_device, linked by launched_by) count as its self device
// time, and with its nested ranges' as its total.
struct Timed {
  const Event* event;
  int64_t child_ns = 0;
  int64_t memory = 0;       // allocated minus freed inside, nested events included
  int64_t self_memory = 0;  // outside nested events
  int64_t device_ns = 0;
  int64_t self_device_ns = 0;
};

std::vector<Timed> nest(const std::vector<Event>& events) {
  std::map<uint64_t, int64_t> launched;  // range id -> device time of what it launched
  for (const Event& e : events)
    if (e.on_device && e.launched_by) launched[e.launched_by] += e.end_ns - e.start_ns;
  std::vector<Timed> timed;
  for (const Event& e : events) {
    timed.push_back({&e});
    if (e.on_device) {  // a device's lane: its own time, outside the threads' nesting
      timed.back().device_ns = timed.back().self_device_ns = e.end_ns - e.start_ns;
    } else if (e.id) {
      auto it = launched.find(e.id);
      if (it != launched.end()) timed.back().self_device_ns = it->second;
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
    return std::make_tuple(a.event->thread, a.event->start_ns, -a.event->end_ns) <
           std::make_tuple(b.event->thread, b.event->start_ns, -b.event->end_ns);
  });
  std::vector<Timed*> stack;
  for (Timed& t : timed) {
    const Event& e = *t.event;
    if (e.on_device) continue;
    while (!stack.empty() &&
           (stack.back()->event->thread != e.thread || stack.back()->event->end_ns < e.end_ns ||
            stack.back()->event->end_ns <= e.start_ns))
      stack.pop_back();
    if (e.kind == EventKind::Memory) {
      if (!stack.empty()) stack.back()->self_memory += e.bytes;
      for (Timed* open : stack) open->memory += e.bytes;
      continue;
    }
    if (!stack.empty()) stack.back()->child_ns += e.end_ns - e.start_ns;
    t.device_ns += t.self_device_ns;
    for (Timed* open : stack) open->device_ns += t.self_device_ns;
    stack.push_back(&t);
  }
  return timed;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string microseconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

}  // namespace

ProfilerAction Schedule::at(int step) const {
  if (step < skip_first) return ProfilerAction::None;
  step -= skip_first;
  int cycle = wait + warmup + active;
  if (cycle <= 0 || (repeat > 0 && step / cycle >= repeat)) return ProfilerAction::None;
  int in_cycle = step % cycle;
  if (in_cycle < wait) return ProfilerAction::None;
  if (in_cycle < wait + warmup) return ProfilerAction::Warmup;
  return in_cycle < cycle - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

Profile::Profile(ProfileOptions options)
    : options_(std::move(options)),
      session_(
          Session::open({options_.record_shapes, options_.profile_memory, options_.with_stack})) {
  if (options_.schedule) {
    const Schedule& s = *options_.schedule;
    EMBER_CHECK(s.wait >= 0 && s.warmup >= 0 && s.active >= 1 && s.repeat >= 0 && s.skip_first >= 0,
                "[profiler.schedule] expected wait, warmup, repeat, skip_first >= 0 and active >= "
                "1, got wait=",
                s.wait, " warmup=", s.warmup, " active=", s.active, " repeat=", s.repeat,
                " skip_first=", s.skip_first);
  }
}

Profile::~Profile() {
  try {
    if (running_) stop();
  } catch (...) {
    // A destructor never throws; on_trace_ready's failure is lost with the profile.
  }
  session_->set_recording(false);
  session_->clear();
}

bool Profile::wants_device_activity() const {
  bool cuda = std::find(options_.activities.begin(), options_.activities.end(),
                        ProfilerActivity::CUDA) != options_.activities.end();
  return cuda && device_backend(DeviceType::CUDA).unavailable_reason().empty();
}

void Profile::begin_recording() {
  session_->clear();
  if (wants_device_activity()) {
    device_backend(DeviceType::CUDA).start_activity();
    device_activity_ = true;
  }
  session_->set_recording(true);
  guard_.emplace(session_);
}

void Profile::drop_recording() {
  session_->set_recording(false);
  guard_.reset();
  session_->clear();
  if (device_activity_) {
    device_activity_ = false;
    device_backend(DeviceType::CUDA).stop_activity();
  }
}

void Profile::end_recording() {
  session_->set_recording(false);
  guard_.reset();
  finished_ = session_->take();
  if (device_activity_) {
    device_activity_ = false;
    for (Event& e : device_backend(DeviceType::CUDA).stop_activity())
      finished_.push_back(std::move(e));
  }
  if (options_.on_trace_ready) options_.on_trace_ready(*this);
}

void Profile::start() {
  EMBER_CHECK(!running_, "[profiler] start() called on a profile that is already running");
  running_ = true;
  step_num_ = 0;
  ProfilerAction a = options_.schedule ? options_.schedule->at(0) : ProfilerAction::Record;
  if (a != ProfilerAction::None) begin_recording();
  if (recording()) step_range_.emplace(EventKind::User, "ProfilerStep#0");
}

void Profile::step() {
  step_range_.reset();
  if (!running_ || !options_.schedule) {
    ++step_num_;
    if (recording())
      step_range_.emplace(EventKind::User, "ProfilerStep#" + std::to_string(step_num_));
    return;
  }
  ProfilerAction before = options_.schedule->at(step_num_);
  ProfilerAction after = options_.schedule->at(++step_num_);
  if (before == ProfilerAction::RecordAndSave && recording()) {
    end_recording();
  } else if (before == ProfilerAction::Warmup && after != ProfilerAction::Warmup && recording()) {
    session_->clear();  // warm-up steps are recorded (caches, first-call costs), then dropped
  }
  if (after == ProfilerAction::None && recording()) {
    drop_recording();
  } else if (after != ProfilerAction::None && !recording()) {
    begin_recording();
  }
  if (recording())
    step_range_.emplace(EventKind::User, "ProfilerStep#" + std::to_string(step_num_));
}

void Profile::stop() {
  EMBER_CHECK(running_, "[profiler] stop() called on a profile that is not running");
  running_ = false;
  step_range_.reset();
  if (!recording()) return;
  bool save = !options_.schedule || options_.schedule->at(step_num_) != ProfilerAction::Warmup;
  if (save)
    end_recording();
  else
    drop_recording();
}

std::vector<Event> Profile::events() const {
  if (recording()) return session_->events();
  return finished_;
}

std::vector<Average> Profile::key_averages(bool group_by_input_shape, int group_by_stack_n) const {
  return averages(events(), group_by_input_shape, group_by_stack_n);
}

std::vector<Average> averages(const std::vector<Event>& all, bool group_by_input_shape,
                              int group_by_stack_n) {
  EMBER_CHECK(group_by_stack_n >= 0, "[profiler.key_averages] expected group_by_stack_n >= 0, got ",
              group_by_stack_n);
  std::vector<Timed> timed = nest(all);
  std::map<std::tuple<std::string, std::string, std::vector<std::string>>, size_t> index;
  std::vector<Average> rows;
  // In order of first appearance in time: the table's order when not sorted.
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
    return a.event->start_ns < b.event->start_ns;
  });
  for (const Timed& t : timed) {
    const Event& e = *t.event;
    if (e.kind == EventKind::Memory) continue;
    size_t frames = std::min(e.stack.size(), static_cast<size_t>(group_by_stack_n));
    auto key = std::make_tuple(e.name, group_by_input_shape ? e.shapes : std::string(),
                               std::vector<std::string>(e.stack.begin(), e.stack.begin() + frames));
    auto [it, inserted] = index.emplace(key, rows.size());
    if (inserted) {
      Average a;
      a.key = e.name;
      a.input_shapes = std::get<1>(key);
      a.stack = std::get<2>(key);
      a.kind = e.kind;
      rows.push_back(a);
    }
    Average& a = rows[it->second];
    int64_t dur = e.end_ns - e.start_ns;
    a.count += 1;
    a.cuda_time_total_ns += t.device_ns;
    a.self_cuda_time_total_ns += t.self_device_ns;
    if (!e.on_device) {
      a.cpu_time_total_ns += dur;
      a.self_cpu_time_total_ns += dur - t.child_ns;
    }
    a.cpu_memory_usage += t.memory;
    a.self_cpu_memory_usage += t.self_memory;
  }
  return rows;
}

std::string format_time_ns(int64_t ns) {
  char buf[32];
  double us = static_cast<double>(ns) / 1000.0;
  if (us >= 1e6)
    std::snprintf(buf, sizeof(buf), "%.3fs", us / 1e6);
  else if (us >= 1e3)
    std::snprintf(buf, sizeof(buf), "%.3fms", us / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.3fus", us);
  return buf;
}

std::string format_memory(int64_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  double a = b < 0 ? -b : b;
  if (a >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof(buf), "%.2f Gb", b / (1024.0 * 1024 * 1024));
  else if (a >= 1024.0 * 1024)
    std::snprintf(buf, sizeof(buf), "%.2f Mb", b / (1024.0 * 1024));
  else if (a >= 1024.0)
    std::snprintf(buf, sizeof(buf), "%.2f Kb", b / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%lld b", static_cast<long long>(bytes));
  return buf;
}

std::string Profile::table(const std::string& sort_by, int row_limit, bool group_by_input_shape,
                           int group_by_stack_n) const {
  std::vector<Average> rows = key_averages(group_by_input_shape, group_by_stack_n);
  using Key = int64_t (*)(const Average&);
  static const std::map<std::string, Key> kSortKeys = {
      {"cpu_time_total", [](const Average& a) { return a.cpu_time_total_ns; }},
      {"self_cpu_time_total", [](const Average& a) { return a.self_cpu_time_total_ns; }},
      {"cpu_time", [](const Average& a) { return a.count ? a.cpu_time_total_ns / a.count : 0; }},
      {"count", [](const Average& a) { return a.count; }},
      {"cpu_memory_usage", [](const Average& a) { return a.cpu_memory_usage; }},
      {"self_cpu_memory_usage", [](const Average& a) { return a.self_cpu_memory_usage; }},
      {"cuda_time_total", [](const Average& a) { return a.cuda_time_total_ns; }},
      {"self_cuda_time_total", [](const Average& a) { return a.self_cuda_time_total_ns; }},
      {"cuda_time", [](const Average& a) { return a.count ? a.cuda_time_total_ns / a.count : 0; }},
  };
  auto sort_key = kSortKeys.find(sort_by);
  if (sort_key == kSortKeys.end()) {
    std::string known;
    for (const auto& [name, fn] : kSortKeys) known += (known.empty() ? "" : ", ") + name;
    EMBER_FAIL("[profiler.table] expected sort_by one of ", known, ", got '", sort_by, "'");
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Average& a, const Average& b) {
    return sort_key->second(a) > sort_key->second(b);
  });
  int64_t self_total = 0, self_device_total = 0;
  for (const Average& a : rows) {
    self_total += a.self_cpu_time_total_ns;
    self_device_total += a.self_cuda_time_total_ns;
  }
  if (row_limit >= 0 && static_cast<size_t>(row_limit) < rows.size()) rows.resize(row_limit);

  std::vector<std::string> header = {"Name",        "Self CPU %", "Self CPU",
                                     "CPU total %", "CPU total",  "CPU time avg"};
  bool device = self_device_total > 0;
  if (device)
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"})
      header.push_back(h);
  bool memory = options_.profile_memory;
  if (memory) {
    header.push_back("CPU Mem");
    header.push_back("Self CPU Mem");
  }
  header.push_back("# of Calls");
  if (group_by_input_shape) header.push_back("Input Shapes");
  bool by_stack = group_by_stack_n > 0;
  if (by_stack) header.push_back("Source Location");
  auto percent = [&](int64_t ns, int64_t total = -1) {
    if (total < 0) total = self_total;
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%.2f%%",
                  total ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0.0);
    return std::string(buf);
  };
  std::vector<std::vector<std::string>> cells;
  for (const Average& a : rows) {
    std::vector<std::string> r = {a.key,
                                  percent(a.self_cpu_time_total_ns),
                                  format_time_ns(a.self_cpu_time_total_ns),
                                  percent(a.cpu_time_total_ns),
                                  format_time_ns(a.cpu_time_total_ns),
                                  format_time_ns(a.count ? a.cpu_time_total_ns / a.count : 0)};
    if (device) {
      r.push_back(format_time_ns(a.self_cuda_time_total_ns));
      r.push_back(percent(a.self_cuda_time_total_ns, self_device_total));
      r.push_back(format_time_ns(a.cuda_time_total_ns));
      r.push_back(format_time_ns(a.count ? a.cuda_time_total_ns / a.count : 0));
    }
    if (memory) {
      r.push_back(format_memory(a.cpu_memory_usage));
      r.push_back(format_memory(a.self_cpu_memory_usage));
    }
    r.push_back(std::to_string(a.count));
    if (group_by_input_shape) r.push_back(a.input_shapes);
    if (by_stack) r.push_back(a.stack.empty() ? "" : a.stack[0]);
    cells.push_back(std::move(r));
    // The further frames under the first, one per line, as PyTorch prints them.
    for (size_t f = 1; by_stack && f < a.stack.size(); ++f) {
      std::vector<std::string> more(header.size());
      more.back() = a.stack[f];
      cells.push_back(std::move(more));
    }
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& r : cells) width[c] = std::max(width[c], r[c].size());
    width[c] = std::min<size_t>(width[c], c == 0 ? 55 : 80);
  }
  auto line = [&] {
    std::string s;
    for (size_t c = 0; c < header.size(); ++c) s += std::string(width[c], '-') + "  ";
    return s + "\n";
  };
  auto row = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell = r[c].size() > width[c] ? r[c].substr(0, width[c] - 3) + "..." : r[c];
      std::string pad(width[c] - cell.size(), ' ');
      s += (c == 0 ? cell + pad : pad + cell) + "  ";
    }
    return s + "\n";
  };
  std::string out = line() + row(header) + line();
  for (const auto& r : cells) out += row(r);
  out += line() + "Self CPU time total: " + format_time_ns(self_total) + "\n";
  if (device) out += "Self CUDA time total: " + format_time_ns(self_device_total) + "\n";
  return out;
}

std::string Profile::chrome_trace() const {
  std::vector<Event> all = events();
  int64_t origin = 0;
  for (const Event& e : all)
    if (origin == 0 || e.start_ns < origin) origin = e.start_ns;
  int pid = static_cast<int>(::getpid());
  std::ostringstream out;
  out << "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"traceEvents\": [";
  bool first = true;
  auto sep = [&] {
    out << (first ? "\n  " : ",\n  ");
    first = false;
  };
  for (const Event& e : all) {
    sep();
    std::string ts = microseconds(e.start_ns - origin);
    if (e.kind == EventKind::Memory) {
      // PyTorch's memory instants, and a counter that draws allocated memory over time.
      out << "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", "
          << "\"pid\": " << pid << ", \"tid\": " << e.thread << ", \"ts\": " << ts
          << ", \"args\": {\"Device Type\": " << json_string(device_type_name(e.device.type()))
          << ", \"Device Id\": " << e.device.index() << ", \"Bytes\": " << e.bytes
          << ", \"Total Allocated\": " << e.total_allocated << "}}";
      sep();
      out << "{\"ph\": \"C\", \"name\": \"memory allocated\", \"pid\": " << pid
          << ", \"ts\": " << ts << ", \"args\": {\"bytes\": " << e.total_allocated << "}}";
      continue;
    }
    // A device's activity goes to the device's own process lane (PyTorch's: pid = the device
    // index, one lane per stream).
    int lane_pid = e.on_device ? e.device.index() : pid;
    out << "{\"ph\": \"X\", \"cat\": " << json_string(kind_name(e.kind))
        << ", \"name\": " << json_string(e.name) << ", \"pid\": " << lane_pid
        << ", \"tid\": " << e.thread << ", \"ts\": " << ts
        << ", \"dur\": " << microseconds(e.end_ns - e.start_ns) << ", \"args\": {";
    std::string args;
    if (e.sequence_nr >= 0) args += "\"Sequence number\": " + std::to_string(e.sequence_nr);
    auto add = [&](const std::string& k, const std::string& v) {
      args += (args.empty() ? "" : ", ") + json_string(k) + ": " + v;
    };
    if (!e.shapes.empty()) add("Input Dims", e.shapes);
    if (!e.dtypes.empty()) add("Input type", json_string(e.dtypes));
    if (e.kind == EventKind::Op || e.kind == EventKind::Backward || e.kind == EventKind::Memcpy)
      add("Device", json_string(e.device.str()));
    if (e.bytes) add("Bytes", std::to_string(e.bytes));
    if (e.on_device) {
      add("device", std::to_string(e.device.index()));
      add("stream", std::to_string(e.thread));
    }
    if (e.id) add("External id", std::to_string(e.id));
    if (e.launched_by) add("External id", std::to_string(e.launched_by));
    if (!e.stack.empty()) {
      std::string frames;
      for (const std::string& f : e.stack) frames += (frames.empty() ? "" : ";") + f;
      add("Call stack", json_string(frames));
    }
    out << args << "}}";
  }
  // The lanes' names: thread 0 is the one that started the profile; devices' lanes are streams.
  std::vector<uint32_t> threads;
  std::vector<std::pair<int, uint32_t>> streams;
  for (const Event& e : all) {
    if (e.on_device)
      streams.emplace_back(e.device.index(), e.thread);
    else
      threads.push_back(e.thread);
  }
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  int named_device = -1;
  for (auto [device, stream] : streams) {
    if (device != named_device) {
      named_device = device;
      sep();
      out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << device
          << ", \"args\": {\"name\": \"GPU " << device << "\"}}";
    }
    sep();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << device
        << ", \"tid\": " << stream << ", \"args\": {\"name\": \"stream " << stream << "\"}}";
  }
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  for (uint32_t t : threads) {
    sep();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << t
        << ", \"args\": {\"name\": \"thread " << t << "\"}}";
  }
  out << "\n]}\n";
  return out.str();
}

std::string Profile::stacks(const std::string& metric) const {
  EMBER_CHECK(
      metric == "self_cpu_time_total" || metric == "cpu_time_total",
      "[profiler.export_stacks] expected metric self_cpu_time_total or cpu_time_total, got '",
      metric, "'");
  std::vector<Event> all = events();
  std::vector<Timed> timed = nest(all);
  std::string out;
  for (const Timed& t : timed) {
    const Event& e = *t.event;
    if (e.stack.empty() || e.kind == EventKind::Memory) continue;
    int64_t ns = e.end_ns - e.start_ns - (metric == "self_cpu_time_total" ? t.child_ns : 0);
    if (ns / 1000 <= 0) continue;  // PyTorch writes whole microseconds, and no zeros
    // Flame-graph tools split frames on ';' and the value off at the last space.
    auto clean = [](std::string f) {
      for (char& c : f)
        if (c == ' ' || c == ';' || c == '\t' || c == '\n') c = '_';
      return f;
    };
    std::string frames;
    for (size_t i = e.stack.size(); i-- > 0;)
      frames += (frames.empty() ? "" : ";") + clean(e.stack[i]);
    out += frames + " " + std::to_string(ns / 1000) + "\n";
  }
  return out;
}

void Profile::export_stacks(const std::string& path, const std::string& metric) const {
  std::string text = stacks(metric);
  std::ofstream f(path);
  EMBER_CHECK(f.good(), "[profiler.export_stacks] cannot write '", path, "'");
  f << text;
  EMBER_CHECK(f.good(), "[profiler.export_stacks] writing '", path, "' failed");
}

void Profile::export_chrome_trace(const std::string& path) const {
  std::ofstream f(path);
  EMBER_CHECK(f.good(), "[profiler.export_chrome_trace] cannot write '", path, "'");
  f << chrome_trace();
  EMBER_CHECK(f.good(), "[profiler.export_chrome_trace] writing '", path, "' failed");
}

}  // namespace ember::profiler
