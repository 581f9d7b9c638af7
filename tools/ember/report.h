// The self-contained HTML report of a training run: inline SVG curves, no scripts, no fetches.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

struct Curve {
  std::string label;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

/// An SVG line chart of the curves.
std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::vector<Curve>& curves);

/// Writes `path` (atomically) with a title, a summary table and the charts.
void write_report(const std::string& path, const std::string& title,
                  const std::vector<std::pair<std::string, std::string>>& summary,
                  const std::vector<std::string>& charts);

}  // namespace ember::cli
