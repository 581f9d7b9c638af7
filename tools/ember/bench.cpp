// `ember bench`: the GPU guides' claims, each measured on this machine as a comparison with a
// ratio and a one-line verdict. Parts that need a GPU (or several devices) say so when absent.
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "tools/ember/args.h"
#include "tools/ember/commands.h"

namespace ember::cli {
namespace {

using json = nlohmann::json;

// Seconds per call: warm-up, then the median of 5 timed loops of about 0.1 s each. On a GPU the
// device is synchronised around each loop (a host clock alone would time only the launches).
double seconds_per_call(const std::function<void()>& f, Device device) {
  auto sync = [&] {
    if (device.is_cuda()) cuda::synchronize(device.index());
  };
  auto now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  f();
  sync();
  double t0 = now();
  f();
  sync();
  double once = std::max(now() - t0, 1e-7);
  int iters = std::max(1, static_cast<int>(0.1 / once));
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    sync();
    double start = now();
    for (int i = 0; i < iters; ++i) f();
    sync();
    times.push_back((now() - start) / iters);
  }
  std::sort(times.begin(), times.end());
  return times[2];
}

struct Row {
  std::string claim, comparison, unit, verdict;
  double a = 0, b = 0;  // the two measurements compared (a / b is the ratio shown)
  bool skipped = false;
};

Row skipped(const std::string& claim, const std::string& why) {
  Row r;
  r.claim = claim;
  r.verdict = why;
  r.skipped = true;
  return r;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double lenet_step_seconds(Device device, int64_t batch, const std::vector<Device>& dp = {}) {
  manual_seed(0);
  auto model = nn::make<models::LeNet>();
  model->to(device);
  std::shared_ptr<nn::Module> run = model;
  if (dp.size() > 1) run = nn::make<nn::DataParallel>(model, dp);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).with_momentum(0.9));
  Tensor x = randn({batch, 1, 28, 28}).to(device), y = randint(0, 10, {batch}).to(device);
  return seconds_per_call(
      [&] {
        Tensor loss = nn::functional::cross_entropy(run->forward(x), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
      },
      device);
}

// The devices a run compares: the CPU, and the first GPU when there is one.
struct Machine {
  Device cpu{kCPU, 0};
  bool gpu = cuda::is_available();
  Device best = gpu ? Device(kCUDA, 0) : cpu;
  std::string no_gpu = "needs a GPU: " + cuda::unavailable_reason();
};

// 1. The GPU is faster than the CPU.
void gpu_beats_cpu(const Machine& m, std::vector<Row>& rows) {
  const std::string matmul = "GPU beats CPU: matmul 2048^3 float32";
  const std::string step = "GPU beats CPU: LeNet training step, batch 256";
  if (!m.gpu) {
    rows.push_back(skipped(matmul, m.no_gpu));
    rows.push_back(skipped(step, m.no_gpu));
    return;
  }
  Tensor a = randn({2048, 2048}), b = randn({2048, 2048});
  Tensor ga = a.to(m.best), gb = b.to(m.best);
  Row r{matmul, "CPU time / GPU time", "ms", ""};
  r.a = 1e3 * seconds_per_call([&] { mm(a, b); }, m.cpu);
  r.b = 1e3 * seconds_per_call([&] { mm(ga, gb); }, m.best);
  r.verdict = r.a > r.b ? "true: the GPU is " + fmt("%.0fx", r.a / r.b) + " faster"
                        : "false on this machine";
  rows.push_back(r);
  Row t{step, "CPU time / GPU time", "ms", ""};
  t.a = 1e3 * lenet_step_seconds(m.cpu, 256);
  t.b = 1e3 * lenet_step_seconds(m.best, 256);
  t.verdict = t.a > t.b ? "true: " + fmt("%.1fx", t.a / t.b) + " faster on the GPU"
                        : "false: the step is too small for the GPU";
  rows.push_back(t);
}

// 2. In-place ops are faster than out-of-place ones.
void in_place_beats_out_of_place(const Machine& m, std::vector<Row>& rows) {
  for (Device d : m.gpu ? std::vector<Device>{m.cpu, m.best} : std::vector<Device>{m.cpu}) {
    Tensor x = randn({16 << 20}).to(d), y = randn({16 << 20}).to(d).mul_(1e-9);
    Row r{"in-place beats out-of-place: add of 16M floats on " + d.str(),
          "out-of-place time / in-place time", "ms", ""};
    r.a = 1e3 * seconds_per_call([&] { Tensor z = x + y; }, d);
    r.b = 1e3 * seconds_per_call([&] { x.add_(y); }, d);
    double ratio = r.a / r.b;
    r.verdict = ratio > 1.1 ? "true: in-place is " + fmt("%.2fx", ratio) +
                                  " faster (no new memory to write)"
                            : "about even: ember's caching allocator makes the new output cheap";
    rows.push_back(r);
  }
}

// 3. Many small tensors are slow.
void big_beats_small(const Machine& m, std::vector<Row>& rows) {
  std::vector<Tensor> small;
  for (int i = 0; i < 10000; ++i) small.push_back(randn({100}).to(m.best));
  Tensor big = randn({1000000}).to(m.best);
  Row r{"one big tensor beats many small ones: 10,000 x 100 vs 1 x 1,000,000 floats, x *= 2 on " +
            m.best.str(),
        "many small / one big", "ms", ""};
  r.a = 1e3 * seconds_per_call(
                  [&] {
                    for (Tensor& t : small) t.mul_(2);
                  },
                  m.best);
  r.b = 1e3 * seconds_per_call([&] { big.mul_(2); }, m.best);
  r.verdict = r.a > r.b ? "true: " + fmt("%.0fx", r.a / r.b) +
                              " slower as small tensors (per-op overhead dominates)"
                        : "false on this machine";
  rows.push_back(r);
}

// 4. Bigger batches use the device better.
void bigger_batches(const Machine& m, std::vector<Row>& rows) {
  double first = 0, last = 0;
  for (int64_t batch : {16, 64, 256, 1024}) {
    double rate = static_cast<double>(batch) / lenet_step_seconds(m.best, batch);
    if (batch == 16) first = rate;
    last = rate;
    Row r{"bigger batches: LeNet training on " + m.best.str() + ", batch " + std::to_string(batch),
          "samples/s relative to batch 16", "samples/s", ""};
    r.a = rate;
    r.b = first;
    r.verdict = fmt("%.0f samples/s", rate);
    rows.push_back(r);
  }
  rows.back().verdict += last > 1.5 * first
                             ? " (true: " + fmt("%.1fx", last / first) + " batch 16's throughput)"
                             : " (batch size matters little here)";
}

// 5. Transfers cost more than the compute they feed.
void transfers_cost_more_than_compute(const Machine& m, std::vector<Row>& rows) {
  if (!m.gpu) {
    rows.push_back(skipped("pinned memory speeds up host-to-device copies", m.no_gpu));
    rows.push_back(skipped("the transfer costs more than the compute it feeds", m.no_gpu));
    return;
  }
  Tensor host = randn({16384, 1, 28, 28}), pinned = host.pin_memory();
  auto model = nn::make<models::LeNet>();
  model->to(m.best);
  model->eval();
  Tensor on_gpu = host.to(m.best);
  NoGradGuard no_grad;
  double pageable = seconds_per_call([&] { host.to(m.best); }, m.best);
  double fast = seconds_per_call([&] { pinned.to(m.best, /*non_blocking=*/true); }, m.best);
  double compute = seconds_per_call([&] { model->forward(on_gpu); }, m.best);
  rows.push_back({"pinned memory speeds up host-to-device copies: 51 MB batch", "pageable / pinned",
                  "ms", "true: pinned is " + fmt("%.1fx", pageable / fast) + " faster",
                  1e3 * pageable, 1e3 * fast});
  rows.push_back({"the transfer costs more than the compute it feeds: LeNet forward on that batch",
                  "transfer (pinned) / compute", "ms",
                  fast > compute ? "true: moving the data takes " + fmt("%.1fx", fast / compute) +
                                       " the compute"
                                 : "false: the compute takes longer than the copy",
                  1e3 * fast, 1e3 * compute});
}

// The devices DataParallel can spread over: every GPU when there are two or more, else every
// virtual CPU device.
std::vector<Device> data_parallel_pool() {
  std::vector<Device> pool;
  if (cuda::device_count() >= 2)
    for (int i = 0; i < cuda::device_count(); ++i) pool.emplace_back(kCUDA, i);
  else if (cpu::device_count() >= 2)
    for (int i = 0; i < cpu::device_count(); ++i) pool.emplace_back(kCPU, i);
  return pool;
}

// 6. Data parallelism scales.
void data_parallel_scales(std::vector<Row>& rows) {
  std::vector<Device> pool = data_parallel_pool();
  if (pool.size() < 2) {
    rows.push_back(
        skipped("DataParallel scales over devices",
                "needs two or more devices: GPUs, or virtual CPU devices (EMBER_CPU_DEVICES=4)"));
    return;
  }
  double base = 256.0 / lenet_step_seconds(pool[0], 256);
  for (size_t n : {size_t{1}, size_t{2}, size_t{4}}) {
    if (n > pool.size()) break;
    std::vector<Device> use(pool.begin(), pool.begin() + static_cast<long>(n));
    double rate = 256.0 / lenet_step_seconds(pool[0], 256, use);
    Row r{"", "samples/s relative to the plain module", "samples/s", ""};
    r.claim = "DataParallel: LeNet training, batch 256, over " + std::to_string(n) +
              " device(s) (" + pool[0].str() + (n > 1 ? " ... " + use.back().str() : "") + ")";
    r.a = rate;
    r.b = base;
    r.verdict = fmt("%.0f samples/s", rate) +
                (n > 1 ? (rate > 1.2 * base ? ", scales" : ", does not scale here") : "");
    if (pool[0].is_cpu() && n > 1) r.verdict += " (virtual CPU devices share this machine's cores)";
    rows.push_back(r);
  }
}

std::vector<Row> measure() {
  Machine m;
  std::vector<Row> rows;
  gpu_beats_cpu(m, rows);
  in_place_beats_out_of_place(m, rows);
  big_beats_small(m, rows);
  bigger_batches(m, rows);
  transfers_cost_more_than_compute(m, rows);
  data_parallel_scales(rows);
  return rows;
}

// One line per row: JSON, or a padded table.
void print(const std::vector<Row>& rows, bool as_json) {
  for (const Row& r : rows) {
    if (as_json) {
      json j = {{"claim", r.claim}, {"verdict", r.verdict}, {"skipped", r.skipped}};
      if (!r.skipped)
        j.update({{"comparison", r.comparison},
                  {"a", r.a},
                  {"b", r.b},
                  {"unit", r.unit},
                  {"ratio", r.a / r.b}});
      std::cout << j.dump() << "\n";
    } else if (r.skipped) {
      std::printf("%-88s  skipped: %s\n", r.claim.c_str(), r.verdict.c_str());
    } else {
      std::printf("%-88s  %10.4g vs %10.4g %-9s ratio %6.2f  %s\n", r.claim.c_str(), r.a, r.b,
                  r.unit.c_str(), r.a / r.b, r.verdict.c_str());
    }
  }
}

}  // namespace

int bench(int argc, char** argv) {
  Args args(argc, argv, {"threads"}, {"json", "help"});
  if (args.flag("help")) {
    std::cout << "usage: ember bench [--json] [--threads N]\n"
                 "Measures the GPU guides' claims on this machine; EMBER_CPU_DEVICES=4 adds "
                 "virtual CPU devices\n"
                 "for the data-parallel part when there are fewer than two GPUs.\n";
    return 0;
  }
  if (args.has("threads")) set_num_threads(static_cast<int>(args.integer("threads", 1, 1, 4096)));
  print(measure(), args.flag("json"));
  return 0;
}

}  // namespace ember::cli
