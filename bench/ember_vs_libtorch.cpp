// ember against libtorch (Debian's 1.13) on the same workloads, in one process, on 1 and on 2
// threads. One JSON object per line: {"name", "threads", "ember", "libtorch", "unit", "ratio"},
// ratio = ember's time / libtorch's time (lower is better). `make bench` prints them as a table.
//
// Both libraries get the same thread count. OpenBLAS is shared: libtorch gets it with `threads`
// threads (its default behaviour), ember keeps it at one thread and splits work on its own pool.
#include <cblas.h>
#include <torch/torch.h>

#include <cstring>
#include <iostream>
#include <map>

#include "bench/harness.h"
#include "ember/ember.h"

namespace {

struct Workload {
  std::string name;
  std::string unit;  // "ms" or "us" per call (per op for the *_per_op workloads)
  double per_call_scale;  // seconds -> unit, divided by ops per call
  std::function<void()> ember;
  std::function<void()> torch;
};

volatile double g_sink = 0;

std::vector<Workload> make_workloads(const std::string& filter) {
  std::vector<Workload> w;
  auto want = [&](const std::string& name) { return filter.empty() || name.find(filter) != std::string::npos; };

  for (int64_t n : {256, 1024, 2048}) {
    std::string name = "matmul_" + std::to_string(n);
    if (!want(name)) continue;
    auto ea = ember::randn({n, n}), eb = ember::randn({n, n});
    auto ta = torch::randn({n, n}), tb = torch::randn({n, n});
    w.push_back({name, "ms", 1e3, [=] { ember::mm(ea, eb); }, [=] { torch::mm(ta, tb); }});
  }
  const int64_t N = 16 << 20;
  if (want("add_out_of_place_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N});
    auto ta = torch::randn({N}), tb = torch::randn({N});
    w.push_back({"add_out_of_place_16M", "ms", 1e3, [=] { ember::Tensor c = ea + eb; },
                 [=] { torch::Tensor c = ta + tb; }});
  }
  if (want("add_out_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N});
    auto ec = ember::empty({N});
    auto ta = torch::randn({N}), tb = torch::randn({N});
    auto tc = torch::empty({N});
    w.push_back({"add_out_16M", "ms", 1e3, [=]() mutable { ember::add_out(ec, ea, eb); },
                 [=]() mutable { torch::add_out(tc, ta, tb); }});
  }
  if (want("add_inplace_16M")) {
    auto ea = ember::randn({N}), eb = ember::randn({N}).mul_(1e-9);
    auto ta = torch::randn({N}), tb = torch::randn({N}).mul_(1e-9);
    w.push_back({"add_inplace_16M", "ms", 1e3, [=]() mutable { ea.add_(eb); },
                 [=]() mutable { ta.add_(tb); }});
  }
  for (int64_t n : {1, 64}) {
    std::string name = "overhead_add_" + std::to_string(n);
    if (!want(name)) continue;
    auto ex = ember::randn({n}), ey = ember::randn({n});
    auto tx = torch::randn({n}), ty = torch::randn({n});
    w.push_back({name, "us", 1e6, [=] { ember::Tensor z = ex + ey; }, [=] { torch::Tensor z = tx + ty; }});
  }
  if (want("sum_16M")) {
    auto ex = ember::randn({N});
    auto tx = torch::randn({N});
    w.push_back({"sum_16M", "ms", 1e3, [=] { g_sink = g_sink + ember::sum(ex).item<float>(); },
                 [=] { g_sink = g_sink + tx.sum().item<float>(); }});
  }
  if (want("softmax_4096x1024")) {
    auto ex = ember::randn({4096, 1024});
    auto tx = torch::randn({4096, 1024});
    w.push_back({"softmax_4096x1024", "ms", 1e3, [=] { ember::softmax(ex, -1); },
                 [=] { torch::softmax(tx, -1); }});
  }
  if (want("conv2d_lenet2_fwd")) {
    auto ex = ember::randn({256, 6, 12, 12}), ew = ember::randn({16, 6, 5, 5}), eb = ember::randn({16});
    auto tx = torch::randn({256, 6, 12, 12}), tw = torch::randn({16, 6, 5, 5}), tb = torch::randn({16});
    w.push_back({"conv2d_lenet2_fwd", "ms", 1e3, [=] { ember::conv2d(ex, ew, eb); },
                 [=] { torch::conv2d(tx, tw, tb); }});
  }
  return w;
}

std::vector<int> parse_threads(const std::string& s) {
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

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  std::vector<int> threads = {1, 2};
  bench::Options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--filter=", 0) == 0) filter = a.substr(9);
    else if (a.rfind("--threads=", 0) == 0) threads = parse_threads(a.substr(10));
    else if (a.rfind("--repeats=", 0) == 0) options.repeats = std::stoi(a.substr(10));
    else {
      std::cerr << "usage: ember-vs-libtorch [--filter=SUBSTRING] [--threads=1,2] [--repeats=N]\n";
      return 2;
    }
  }
  try {
    torch::NoGradGuard torch_no_grad;
    for (int t : threads) {
      ember::set_num_threads(t);
      at::set_num_threads(t);
      std::vector<Workload> workloads = make_workloads(filter);
      for (const Workload& w : workloads) {
        bench::Result r = bench::compare(
            w.ember, w.torch, [] { openblas_set_num_threads(1); },
            [t] { openblas_set_num_threads(t); }, options);
        bench::print_json(w.name, t, r.ember * w.per_call_scale, r.libtorch * w.per_call_scale, w.unit);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "ember-vs-libtorch: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
