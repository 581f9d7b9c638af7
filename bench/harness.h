// Timing for ember-vs-libtorch: warm up, calibrate a loop to ~40 ms, then time interleaved
// repeats of both libraries and report medians, one JSON object per line.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace bench {

struct Options {
  int repeats = 7;
  double target_seconds = 0.04;  // per repeat
};

/// "1,2" (a --threads value) -> {1, 2}.
inline std::vector<int> parse_threads(const std::string& s) {
  std::vector<int> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(',', start);
    out.push_back(std::stoi(s.substr(start, end - start)));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds per call of f, timed over `iters` calls.
inline double time_loop(const std::function<void()>& f, int64_t iters) {
  double t0 = now();
  for (int64_t i = 0; i < iters; ++i) f();
  return (now() - t0) / static_cast<double>(iters);
}

inline int64_t calibrate(const std::function<void()>& f, double target) {
  f();  // first call: allocations, lazy initialisation
  double t = time_loop(f, 1);
  int64_t iters = 1;
  while (t * static_cast<double>(iters) < target / 4 && iters < (int64_t{1} << 30)) {
    iters *= 4;
    t = time_loop(f, iters);
  }
  return std::max<int64_t>(1, static_cast<int64_t>(target / std::max(t, 1e-9)));
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Result {
  double ember, libtorch;  // seconds per call
};

// Lets the other library's idle workers stop spinning (libgomp spins for a while after each
// parallel region) so that neither is timed against the other's spinning threads.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

// `before_ember` / `before_torch` switch per-library settings (BLAS threads) before each repeat.
inline Result compare(const std::function<void()>& ember, const std::function<void()>& torch,
                      const std::function<void()>& before_ember,
                      const std::function<void()>& before_torch, const Options& o) {
  before_ember();
  int64_t ne = calibrate(ember, o.target_seconds);
  before_torch();
  int64_t nt = calibrate(torch, o.target_seconds);
  std::vector<double> te, tt;
  for (int r = 0; r < o.repeats; ++r) {
    before_ember();
    settle();
    te.push_back(time_loop(ember, ne));
    before_torch();
    settle();
    tt.push_back(time_loop(torch, nt));
  }
  return {median(te), median(tt)};
}

inline void print_json(const std::string& name, int threads, double ember, double torch,
                       const std::string& unit) {
  std::printf(
      "{\"name\": \"%s\", \"threads\": %d, \"ember\": %.6g, \"libtorch\": %.6g, "
      "\"unit\": \"%s\", \"ratio\": %.3f}\n",
      name.c_str(), threads, ember, torch, unit.c_str(), ember / torch);
  std::fflush(stdout);
}

}  // namespace bench
