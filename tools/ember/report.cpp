#include "tools/ember/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ember/io/atomic_file.h"

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
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  double pad = (y1 - y0) * 0.05;
  y0 -= pad;
  y1 += pad;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (W - left - right); };
  auto py = [&](double y) { return H - bottom - (y - y0) / (y1 - y0) * (H - top - bottom); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">"
    << escape(title) << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << W - left - right
    << "\" height=\"" << H - top - bottom << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double y = y0 + (y1 - y0) * i / 4, x = x0 + (x1 - x0) * i / 4;
    s << "<text x=\"" << left - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << num(y)
      << "</text>\n";
    s << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << py(y) << "\" y2=\""
      << py(y) << "\" stroke=\"#eee\"/>\n";
    s << "<text x=\"" << px(x) << "\" y=\"" << H - bottom + 16 << "\" text-anchor=\"middle\">"
      << num(x) << "</text>\n";
  }
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

void write_report(const std::string& path, const std::string& title,
                  const std::vector<std::pair<std::string, std::string>>& summary,
                  const std::vector<std::string>& charts) {
  io::write_atomically(path, [&](std::ostream& os) {
    os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title)
       << "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:720px}"
          "td{padding:2px 12px 2px 0;white-space:pre-wrap;vertical-align:top}</style></head><body>\n<h1>"
       << escape(title) << "</h1>\n<table>\n";
    for (auto& [k, v] : summary)
      os << "<tr><td>" << escape(k) << "</td><td>" << escape(v) << "</td></tr>\n";
    os << "</table>\n";
    for (const std::string& c : charts) os << "<p>" << c << "</p>\n";
    os << "</body></html>\n";
  });
}

}  // namespace ember::cli
