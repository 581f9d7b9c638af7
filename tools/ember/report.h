// The self-contained HTML report of a training run: inline SVG curves, no scripts, no fetches.
#pragma once

#include <string>
#include <vector>

#include "ember/core/profiler_events.h"

namespace ember::cli {

struct Curve {
  std::string label;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

/// A chart axis from lo to hi with its ticks: round values (1, 2, 2.5 or 5 times a power of ten
/// apart), at most max_ticks of them, lo and hi on the first and last.
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
};
Axis round_axis(double lo, double hi, int max_ticks = 6);

/// An SVG line chart of the curves.
std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::vector<Curve>& curves);

/// The profile's top `rows` ops by self time, as an HTML table.
std::string top_ops_table(const std::vector<profiler::Event>& events, size_t rows);
/// A timeline of the last "ProfilerStep#N" range (or of all events): one lane per thread, nested
/// events stacked below their parents, coloured by kind, each with its name as a tooltip.
std::string svg_timeline(const std::vector<profiler::Event>& events);
/// Allocated memory over the profiled steps, from the Memory events (empty without them).
std::string svg_memory(const std::vector<profiler::Event>& events);

/// The three parts above for a profile's events; none when nothing was profiled.
std::vector<std::string> profile_report(const std::vector<profiler::Event>& events);

/// Writes `path` (atomically) with a title, a summary table and the charts.
void write_report(const std::string& path, const std::string& title,
                  const std::vector<std::pair<std::string, std::string>>& summary,
                  const std::vector<std::string>& charts);

}  // namespace ember::cli
