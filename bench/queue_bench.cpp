// How long a 64 MiB tensor takes to reach another process through a multiprocessing::Queue
// (Note [Tensors by descriptor]: the memfd travels, the data does not). The parent puts the tensor,
// the child gets it and answers with a small value; a round trip is two messages, so the one-way
// time is at most half of it. Prints one JSON line.
//
//   build/cpu/bench/ember-queue-bench [--mib 64] [--iterations 200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;
namespace mp = ember::multiprocessing;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int64_t mib = 64, iterations = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::stoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::stoll(argv[i + 1]);
  }
  mp::Queue to_child, to_parent;
  Tensor t = ones({mib << 18});  // float32: 4 bytes each
  auto t0 = Clock::now();
  to_child.put(t);  // the first put moves the tensor into shared memory (one copy)
  double first_put_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  mp::ProcessContext child = mp::start_processes(1, [&](int) {
    for (int64_t i = 0; i <= iterations; ++i) {
      Tensor r = to_child.get(30.0).tensor();
      // Touch one element: the receiver really maps the sender's memory.
      to_parent.put(r.data_ptr<float>()[r.numel() - 1]);
    }
  });
  to_parent.get(30.0);  // the first message, put before the child started
  std::vector<double> round_trips;
  for (int64_t i = 0; i < iterations; ++i) {
    t.data_ptr<float>()[t.numel() - 1] = static_cast<float>(i);
    auto s = Clock::now();
    to_child.put(t);
    double seen = to_parent.get(30.0).to_double();
    round_trips.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    EMBER_CHECK(seen == static_cast<double>(i), "the child saw ", seen, ", not ", i);
  }
  child.join(30.0);
  std::sort(round_trips.begin(), round_trips.end());
  std::printf(
      "{\"bench\":\"queue\",\"tensor_mib\":%lld,\"iterations\":%lld,\"first_put_ms\":%.3f,"
      "\"round_trip_median_ms\":%.4f,\"round_trip_p90_ms\":%.4f,\"one_way_upper_bound_ms\":%.4f}\n",
      static_cast<long long>(mib), static_cast<long long>(iterations), first_put_ms,
      round_trips[round_trips.size() / 2], round_trips[round_trips.size() * 9 / 10],
      round_trips[round_trips.size() / 2] / 2);
  return 0;
}
