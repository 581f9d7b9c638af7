#include "tools/ember/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "ember/io/atomic_file.h"
#include "ember/profiler/profiler.h"

namespace ember::cli {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

Axis round_axis(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  // A step of 1, 2, 2.5 or 5 times a power of ten that fits max_ticks intervals.
  double raw = (hi - lo) / std::max(1, max_ticks - 1);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * power;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  Axis a;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  for (double t = a.lo; t <= a.hi + step * 1e-6; t += step)
    a.ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return a;
}

std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::vector<Curve>& curves) {
  const double W = 640, H = 320, left = 60, right = 20, top = 30, bottom = 45;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Curve& c : curves)
    for (auto [x, y] : c.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  // Axes from one round tick to another, ticks on round values (0.25, not 0.2398).
  Axis xa = round_axis(x0, x1), ya = round_axis(y0, y1);
  auto px = [&](double x) { return left + (x - xa.lo) / (xa.hi - xa.lo) * (W - left - right); };
  auto py = [&](double y) {
    return H - bottom - (y - ya.lo) / (ya.hi - ya.lo) * (H - top - bottom);
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">"
    << escape(title) << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << W - left - right
    << "\" height=\"" << H - top - bottom << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (double y : ya.ticks) {
    s << "<text class=\"tick\" x=\"" << left - 6 << "\" y=\"" << py(y) + 4
      << "\" text-anchor=\"end\">" << num(y) << "</text>\n";
    s << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << py(y) << "\" y2=\""
      << py(y) << "\" stroke=\"#eee\"/>\n";
  }
  for (double x : xa.ticks)
    s << "<text class=\"tick\" x=\"" << px(x) << "\" y=\"" << H - bottom + 16
      << "\" text-anchor=\"middle\">" << num(x) << "</text>\n";
  s << "<text x=\"" << W / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">"
    << escape(x_label) << "</text>\n";
  int legend = 0;
  for (const Curve& c : curves) {
    s << "<polyline fill=\"none\" stroke=\"" << c.color << "\" stroke-width=\"1.8\" points=\"";
    for (auto [x, y] : c.points) s << num(px(x)) << "," << num(py(y)) << " ";
    s << "\"/>\n";
    if (c.points.size() == 1)
      s << "<circle cx=\"" << px(c.points[0].first) << "\" cy=\"" << py(c.points[0].second)
        << "\" r=\"4\" fill=\"" << c.color << "\"/>\n";
    double ly = top + 16 + 16 * legend++;
    s << "<line x1=\"" << W - right - 150 << "\" x2=\"" << W - right - 130 << "\" y1=\"" << ly - 4
      << "\" y2=\"" << ly - 4 << "\" stroke=\"" << c.color << "\" stroke-width=\"2\"/>\n";
    s << "<text x=\"" << W - right - 124 << "\" y=\"" << ly << "\">" << escape(c.label)
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string top_ops_table(const std::vector<profiler::Event>& events, size_t rows) {
  std::vector<profiler::Average> avg = profiler::averages(events);
  std::stable_sort(avg.begin(), avg.end(), [](const auto& a, const auto& b) {
    return a.self_cpu_time_total_ns > b.self_cpu_time_total_ns;
  });
  int64_t total = 0;
  for (const auto& a : avg) total += a.self_cpu_time_total_ns;
  std::ostringstream s;
  s << "<h2>Top ops of the profiled steps, by self time</h2>\n<table class=\"ops\">\n<tr><th>name"
       "</th><th>kind</th><th>calls</th><th>self</th><th>self %</th><th>total</th><th>memory"
       "</th></tr>\n";
  for (size_t i = 0; i < std::min(rows, avg.size()); ++i) {
    const auto& a = avg[i];
    char pct[16];
    std::snprintf(
        pct, sizeof pct, "%.1f%%",
        total ? 100.0 * static_cast<double>(a.self_cpu_time_total_ns) / static_cast<double>(total)
              : 0.0);
    s << "<tr><td>" << escape(a.key) << "</td><td>" << profiler::kind_name(a.kind) << "</td><td>"
      << a.count << "</td><td>" << profiler::format_time_ns(a.self_cpu_time_total_ns) << "</td><td>"
      << pct << "</td><td>" << profiler::format_time_ns(a.cpu_time_total_ns) << "</td><td>"
      << profiler::format_memory(a.cpu_memory_usage) << "</td></tr>\n";
  }
  s << "</table>\n";
  return s.str();
}

std::string svg_timeline(const std::vector<profiler::Event>& all) {
  using profiler::Event;
  // The window: the last profiled step, else everything.
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  const Event* last_step = nullptr;
  for (const Event& e : all)
    if (e.name.rfind("ProfilerStep#", 0) == 0 && (!last_step || e.start_ns > last_step->start_ns))
      last_step = &e;
  std::vector<const Event*> shown;
  for (const Event& e : all) {
    if (e.kind == profiler::EventKind::Memory) continue;
    if (last_step && (e.end_ns < last_step->start_ns || e.start_ns > last_step->end_ns)) continue;
    shown.push_back(&e);
    t0 = std::min(t0, e.start_ns);
    t1 = std::max(t1, e.end_ns);
  }
  if (shown.empty()) return "";
  // A lane per thread, then one per device stream; depth: how many shown events enclose one.
  using Lane = std::tuple<bool, int, uint32_t>;  // (on a device, the device, thread or stream)
  auto lane = [](const Event* e) {
    return Lane{e->on_device, e->on_device ? e->device.index() : 0, e->thread};
  };
  std::stable_sort(shown.begin(), shown.end(), [&](const Event* a, const Event* b) {
    return std::make_tuple(lane(a), a->start_ns, -a->end_ns) <
           std::make_tuple(lane(b), b->start_ns, -b->end_ns);
  });
  std::map<Lane, int> lane_depth;  // lane -> deepest level
  std::vector<int> depth(shown.size());
  std::vector<const Event*> stack;
  for (size_t i = 0; i < shown.size(); ++i) {
    const Event* e = shown[i];
    while (!stack.empty() && (lane(stack.back()) != lane(e) || stack.back()->end_ns <= e->start_ns))
      stack.pop_back();
    depth[i] = static_cast<int>(stack.size());
    lane_depth[lane(e)] = std::max(lane_depth[lane(e)], depth[i]);
    stack.push_back(e);
  }
  const double W = 640, left = 70, right = 20, top = 30, row = 14, lane_gap = 10, bottom = 40;
  std::map<Lane, double> lane_top;
  double y = top;
  for (auto& [l, d] : lane_depth) {
    lane_top[l] = y;
    y += (d + 1) * row + lane_gap;
  }
  const double H = y + bottom;
  Axis xa = round_axis(0, static_cast<double>(t1 - t0) / 1e6);  // milliseconds
  auto px = [&](int64_t ns) {
    return left +
           (static_cast<double>(ns - t0) / 1e6 - xa.lo) / (xa.hi - xa.lo) * (W - left - right);
  };
  auto color = [](profiler::EventKind k) {
    switch (k) {
      case profiler::EventKind::Op:
        return "#4c78a8";
      case profiler::EventKind::Backward:
        return "#f58518";
      case profiler::EventKind::User:
        return "#b0b0b0";
      case profiler::EventKind::Optimizer:
        return "#54a24b";
      case profiler::EventKind::DataLoader:
        return "#e45756";
      case profiler::EventKind::Collective:
        return "#b279a2";
      case profiler::EventKind::Memcpy:
        return "#eeca3b";
      case profiler::EventKind::Kernel:
        return "#72b7b2";
      default:
        return "#888888";
    }
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">"
    << escape(last_step ? "Timeline of " + last_step->name : std::string("Timeline"))
    << " (ops blue, backward orange, optimizer green, data loading red, GPU kernels teal)"
    << "</text>\n";
  for (auto& [l, ty] : lane_top) {
    auto [on_device, device, id] = l;
    s << "<text x=\"" << left - 6 << "\" y=\"" << ty + row - 3 << "\" text-anchor=\"end\">"
      << (on_device ? "cuda:" + std::to_string(device) + " s" : std::string("thread ")) << id
      << "</text>\n";
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    const Event* e = shown[i];
    double x = px(e->start_ns), w = std::max(0.5, px(e->end_ns) - x);
    double ey = lane_top[lane(e)] + depth[i] * row;
    s << "<rect x=\"" << num(x) << "\" y=\"" << num(ey) << "\" width=\"" << num(w) << "\" height=\""
      << row - 2 << "\" fill=\"" << color(e->kind) << "\"><title>" << escape(e->name) << " "
      << profiler::format_time_ns(e->end_ns - e->start_ns) << "</title></rect>\n";
  }
  for (double t : xa.ticks)
    s << "<text class=\"tick\" x=\"" << px(t0 + static_cast<int64_t>(t * 1e6)) << "\" y=\""
      << H - bottom + 16 << "\" text-anchor=\"middle\">" << num(t) << "</text>\n";
  s << "<text x=\"" << W / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">ms</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string svg_memory(const std::vector<profiler::Event>& events) {
  Curve allocated{"allocated (MiB)", "#4c78a8", {}};
  int64_t t0 = INT64_MAX;
  for (const auto& e : events)
    if (e.kind == profiler::EventKind::Memory) t0 = std::min(t0, e.start_ns);
  for (const auto& e : events)
    if (e.kind == profiler::EventKind::Memory)
      allocated.points.emplace_back(static_cast<double>(e.start_ns - t0) / 1e6,
                                    static_cast<double>(e.total_allocated) / (1024.0 * 1024.0));
  if (allocated.points.empty()) return "";
  std::sort(allocated.points.begin(), allocated.points.end());
  return svg_chart("Memory over the profiled steps", "ms", {allocated});
}

std::vector<std::string> profile_report(const std::vector<profiler::Event>& events) {
  if (events.empty()) return {};
  return {top_ops_table(events, 15), svg_timeline(events), svg_memory(events)};
}

void write_report(const std::string& path, const std::string& title,
                  const std::vector<std::pair<std::string, std::string>>& summary,
                  const std::vector<std::string>& charts) {
  io::write_atomically(path, [&](std::ostream& os) {
    os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title)
       << "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:720px}"
          "td{padding:2px 12px 2px 0;white-space:pre-wrap;vertical-align:top}"
          "table.ops td,table.ops th{white-space:nowrap;padding:1px 10px 1px 0;text-align:left}"
          "</style></head><body>\n<h1>"
       << escape(title) << "</h1>\n<table>\n";
    for (auto& [k, v] : summary)
      os << "<tr><td>" << escape(k) << "</td><td>" << escape(v) << "</td></tr>\n";
    os << "</table>\n";
    for (const std::string& c : charts) os << "<div>" << c << "</div>\n";
    os << "</body></html>\n";
  });
}

}  // namespace ember::cli
