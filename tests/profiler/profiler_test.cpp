// ember::profiler: ops recorded from their entry line (nested, with shapes), backward linked to
// its forward op, record_function, schedules, averages and tables, the Chrome trace, memory, and
// the threads that carry the caller's session.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ember/distributed/distributed.h"
#include "ember/ember.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using profiler::Event;
using profiler::EventKind;
using profiler::Profile;

std::vector<Event> named(const std::vector<Event>& events, const std::string& name) {
  std::vector<Event> out;
  for (const Event& e : events)
    if (e.name == name) out.push_back(e);
  return out;
}

TEST(Profiler, RecordsOpsNestedWithShapesAndNothingWhenOff) {
  Tensor x = randn({4, 3}), w = randn({5, 3}), b = randn({5});
  nn::functional::linear(x, w, b);  // not recorded: no profile
  Profile prof({.record_shapes = true});
  prof.start();
  Tensor y = nn::functional::linear(x, w, b);
  prof.stop();
  std::vector<Event> events = prof.events();
  std::vector<Event> lin = named(events, "linear");
  ASSERT_EQ(lin.size(), 1u);
  EXPECT_EQ(lin[0].kind, EventKind::Op);
  EXPECT_EQ(lin[0].shapes, "[[4, 3], [5, 3], [5]]");
  EXPECT_EQ(lin[0].dtypes, "[float32, float32, float32]");
  // The ops linear is made of are entered, and recorded, inside it.
  bool nested = false;
  for (const Event& e : events)
    if (e.name != "linear" && e.start_ns >= lin[0].start_ns && e.end_ns <= lin[0].end_ns)
      nested = true;
  EXPECT_TRUE(nested);
  size_t before = events.size();
  nn::functional::linear(x, w, b);  // after stop: nothing more
  EXPECT_EQ(prof.events().size(), before);
}

TEST(Profiler, BackwardCarriesItsForwardOpsSequenceNumber) {
  Tensor a = randn({3, 3}).requires_grad_();
  Profile prof;
  prof.start();
  Tensor m = mul(a, a);
  m.sum().backward();
  prof.stop();
  std::vector<Event> events = prof.events();
  std::vector<Event> fwd = named(events, "mul");
  std::vector<Event> bwd = named(events, "MulBackward0");
  ASSERT_FALSE(fwd.empty());
  ASSERT_EQ(bwd.size(), 1u);
  EXPECT_EQ(bwd[0].kind, EventKind::Backward);
  EXPECT_EQ(bwd[0].sequence_nr, fwd[0].sequence_nr);
  EXPECT_GE(bwd[0].start_ns, fwd[0].end_ns);
}

TEST(Profiler, ViewMethodsAreOpsWithTheirBackward) {
  Tensor a = randn({3, 4}).requires_grad_();
  Profile prof({.record_shapes = true});
  prof.start();
  Tensor y = a.t().reshape({2, 6}).unsqueeze(0);
  y.sum().backward();
  prof.stop();
  std::vector<Event> events = prof.events();
  std::vector<Event> bwd = named(events, "TransposeBackward0");
  ASSERT_EQ(bwd.size(), 1u);
  // The forward's events: those before the backward pass (which runs views of its own, inside
  // the backward nodes, as PyTorch's do).
  int64_t backward_start = std::numeric_limits<int64_t>::max();
  for (const Event& e : events)
    if (e.name.find("Backward") != std::string::npos)
      backward_start = std::min<int64_t>(backward_start, e.start_ns);
  std::vector<Event> forward;
  for (const Event& e : events)
    if (e.end_ns <= backward_start) forward.push_back(e);
  // t is made of transpose, as PyTorch's aten::t of aten::transpose: both are recorded.
  for (const char* op : {"t", "transpose", "reshape", "unsqueeze"})
    EXPECT_EQ(named(forward, op).size(), 1u) << op;
  ASSERT_EQ(named(forward, "transpose").size(), 1u);
  EXPECT_EQ(named(forward, "transpose")[0].shapes, "[[3, 4]]");
  EXPECT_EQ(bwd[0].sequence_nr, named(forward, "transpose")[0].sequence_nr);
}

TEST(Profiler, RecordFunctionAveragesAndTable) {
  Profile prof;
  prof.start();
  for (int i = 0; i < 3; ++i) {
    profiler::RecordFunction r("my_block");
    add(ones({8}), ones({8}));
  }
  prof.stop();
  std::vector<profiler::Average> avg = prof.key_averages();
  auto block = std::find_if(avg.begin(), avg.end(),
                            [](const profiler::Average& a) { return a.key == "my_block"; });
  ASSERT_NE(block, avg.end());
  EXPECT_EQ(block->count, 3);
  EXPECT_EQ(block->kind, EventKind::User);
  EXPECT_GE(block->cpu_time_total_ns, block->self_cpu_time_total_ns);
  std::string table = prof.table("self_cpu_time_total", 5);
  EXPECT_NE(table.find("Self CPU %"), std::string::npos) << table;
  EXPECT_NE(table.find("my_block"), std::string::npos) << table;
  EXPECT_NE(table.find("Self CPU time total: "), std::string::npos) << table;
  EXPECT_THROW_WITH(prof.table("fastest"), "expected sort_by one of");
}

TEST(Profiler, ScheduleHandsOverOnlyTheActiveSteps) {
  std::vector<std::vector<Event>> traces;
  Profile prof({.schedule = profiler::Schedule{.wait = 1, .warmup = 1, .active = 2, .repeat = 1},
                .on_trace_ready = [&](Profile& p) { traces.push_back(p.events()); }});
  prof.start();
  for (int step = 0; step < 6; ++step) {
    {
      profiler::RecordFunction r("step" + std::to_string(step));
      add(ones({2}), ones({2}));
    }
    prof.step();
  }
  prof.stop();
  ASSERT_EQ(traces.size(), 1u);
  std::set<std::string> steps;
  for (const Event& e : traces[0])
    if (e.name.rfind("step", 0) == 0) steps.insert(e.name);
  EXPECT_EQ(steps, (std::set<std::string>{"step2", "step3"}));
}

TEST(Profiler, ChromeTraceIsJsonWithOneCompleteEventPerRange) {
  Profile prof({.record_shapes = true});
  prof.start();
  matmul(randn({2, 3}), randn({3, 4}));
  prof.stop();
  nlohmann::json trace = nlohmann::json::parse(prof.chrome_trace());
  ASSERT_TRUE(trace.contains("traceEvents"));
  int matmuls = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "matmul") continue;
    ++matmuls;
    EXPECT_EQ(e["args"]["Input Dims"], nlohmann::json::parse("[[2, 3], [3, 4]]"));
    EXPECT_GE(e["dur"].get<double>(), 0.0);
  }
  EXPECT_EQ(matmuls, 1);
}

// A provider stands in for the Python frames ember's package installs: each op keeps the frames
// of its caller, grouping splits rows by them, and the trace and flame-graph lines carry them.
std::vector<std::string> g_frames;
std::vector<std::string> test_stack() { return g_frames; }

TEST(Profiler, WithStackKeepsEachOpsCallerFrames) {
  profiler::set_stack_provider(&test_stack);
  Profile prof({.with_stack = true});
  prof.start();
  g_frames = {"model.py(7): forward", "train.py(3): <module>"};
  Tensor a = add(ones({64}), ones({64}));
  g_frames = {"model.py(9): forward", "train.py(3): <module>"};
  add(a, a);
  prof.stop();
  profiler::set_stack_provider(nullptr);
  std::vector<std::vector<std::string>> stacks;
  for (const Event& e : prof.events())
    if (e.name == "add") stacks.push_back(e.stack);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(stacks[0][0], "model.py(7): forward");
  EXPECT_EQ(stacks[1][0], "model.py(9): forward");
  auto adds = [](const std::vector<profiler::Average>& rows) {
    return std::count_if(rows.begin(), rows.end(),
                         [](const profiler::Average& a) { return a.key == "add"; });
  };
  EXPECT_EQ(adds(prof.key_averages()), 1);
  EXPECT_EQ(adds(prof.key_averages(false, 1)), 2);  // the two lines apart
  EXPECT_EQ(adds(prof.key_averages(false, 1)), adds(prof.key_averages(false, 5)));
  std::string table = prof.table("count", -1, false, 2);
  EXPECT_NE(table.find("Source Location"), std::string::npos) << table;
  EXPECT_NE(table.find("train.py(3): <module>"), std::string::npos) << table;
  nlohmann::json trace = nlohmann::json::parse(prof.chrome_trace());
  int with_stack = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "add" && e["args"].contains("Call stack"))
      with_stack += e["args"]["Call stack"] == "model.py(7): forward;train.py(3): <module>";
  EXPECT_EQ(with_stack, 1);
  // Flame-graph lines, outermost first, whole microseconds (events under 1 us are left out).
  for (const std::string& metric : {"self_cpu_time_total", "cpu_time_total"}) {
    std::istringstream lines(prof.stacks(metric));
    for (std::string line; std::getline(lines, line);)
      EXPECT_EQ(line.rfind("train.py(3):_<module>;model.py(", 0), 0u) << line;
  }
  EXPECT_THROW_WITH(prof.stacks("count"), "expected metric self_cpu_time_total or");
  // Without with_stack, nothing is asked of the provider.
  profiler::set_stack_provider(&test_stack);
  Profile plain;
  plain.start();
  add(a, a);
  plain.stop();
  profiler::set_stack_provider(nullptr);
  for (const Event& e : plain.events()) EXPECT_TRUE(e.stack.empty()) << e.name;
}

// A GPU's activity (what the CUDA backend hands over from CUPTI, made by hand here): each kernel
// is a row with its device time, and the ranges that launched it get it as their self device
// time and, through nesting, as their enclosing ranges' total.
TEST(Profiler, DeviceTimeGoesToTheRangeThatLaunchedIt) {
  auto range = [](const char* name, uint64_t id, int64_t start_us, int64_t end_us) {
    Event e;
    e.name = name;
    e.id = id;
    e.start_ns = start_us * 1000;
    e.end_ns = end_us * 1000;
    return e;
  };
  auto kernel = [](const char* name, uint64_t launched_by, int64_t start_us, int64_t end_us) {
    Event e;
    e.name = name;
    e.kind = EventKind::Kernel;
    e.on_device = true;
    e.device = Device(DeviceType::CUDA, 0);
    e.thread = 7;  // a stream: not the CPU thread 0 below
    e.launched_by = launched_by;
    e.start_ns = start_us * 1000;
    e.end_ns = end_us * 1000;
    return e;
  };
  std::vector<Event> events = {range("step", 1, 0, 100), range("addmm", 2, 10, 50),
                               kernel("gemm_kernel", 2, 20, 80), kernel("relu_kernel", 1, 85, 95),
                               kernel("gemm_kernel", 0, 90, 99)};  // launched outside any range
  std::map<std::string, profiler::Average> rows;
  for (const profiler::Average& a : profiler::averages(events)) rows[a.key] = a;
  EXPECT_EQ(rows["addmm"].self_cuda_time_total_ns, 60000);
  EXPECT_EQ(rows["addmm"].cuda_time_total_ns, 60000);
  EXPECT_EQ(rows["step"].self_cuda_time_total_ns, 10000);
  EXPECT_EQ(rows["step"].cuda_time_total_ns, 70000);
  EXPECT_EQ(rows["step"].self_cpu_time_total_ns, 60000);  // kernels are not its CPU children
  EXPECT_EQ(rows["gemm_kernel"].count, 2);
  EXPECT_EQ(rows["gemm_kernel"].cuda_time_total_ns, 69000);
  EXPECT_EQ(rows["gemm_kernel"].cpu_time_total_ns, 0);
  EXPECT_EQ(rows["gemm_kernel"].kind, EventKind::Kernel);
}

TEST(Profiler, MemoryEventsAttributeAllocationsToTheirOp) {
  Profile prof({.profile_memory = true});
  prof.start();
  Tensor big = zeros({1024, 256});  // 1 MiB
  prof.stop();
  int64_t allocated = 0;
  for (const Event& e : prof.events())
    if (e.kind == EventKind::Memory && e.bytes > 0) allocated += e.bytes;
  EXPECT_GE(allocated, 1024 * 256 * 4);
  std::vector<profiler::Average> avg = prof.key_averages();
  auto full_row = std::find_if(avg.begin(), avg.end(),
                               [](const profiler::Average& a) { return a.key == "full"; });
  ASSERT_NE(full_row, avg.end());
  EXPECT_GE(full_row->cpu_memory_usage, 1024 * 256 * 4);
}

TEST(Profiler, ThreadsEmberStartsRecordIntoTheCallersSession) {
  Profile prof;
  prof.start();
  distributed::run_threads(2, [](int rank) {
    Tensor t = add(ones({4}), full({4}, rank));
    distributed::all_reduce(t);
    // An async_op's wait, later, is an event of its own.
    std::shared_ptr<distributed::Work> work =
        distributed::all_reduce(t, distributed::ReduceOp::SUM, nullptr, /*async_op=*/true);
    work->wait();
  });
  prof.stop();
  std::set<uint32_t> threads;
  for (const Event& e : named(prof.events(), "add")) threads.insert(e.thread);
  EXPECT_GE(threads.size(), 2u);
  std::set<std::string> collectives;
  for (const Event& e : prof.events())
    if (e.kind == EventKind::Collective) collectives.insert(e.name);
  EXPECT_TRUE(collectives.count("gloo:all_reduce")) << "collectives: " << collectives.size();
  EXPECT_TRUE(collectives.count("wait:all_reduce")) << "collectives: " << collectives.size();
}

// The op entry carries autocast: every listed op in a row casts (no pass is left over from one
// op's entry for the next), with the profiler off and on; a composite op that is not listed
// (mul of a listed op's result) keeps autocast on inside.
TEST(Profiler, AutocastThroughTheOpEntryWithAndWithoutAProfile) {
  Tensor a = randn({4, 4}), b = randn({4, 4});
  for (bool profiling : {false, true}) {
    Profile prof({.record_shapes = true});
    if (profiling) prof.start();
    {
      amp::autocast region(kCPU, kBFloat16);
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(matmul(a, b).dtype(), kBFloat16) << "profiling " << profiling << " call " << i;
        EXPECT_EQ(mul(a, b).dtype(), kFloat32);  // not on the CPU lists
        EXPECT_EQ(nn::functional::linear(a, b, Tensor()).dtype(), kBFloat16);
      }
    }
    EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
    if (profiling) {
      prof.stop();
      std::vector<Event> mm = named(prof.events(), "matmul");  // linear's own included
      ASSERT_GE(mm.size(), 4u);
      EXPECT_EQ(mm[0].dtypes, "[float32, float32]");  // as called, before the casts
    }
  }
}

// A whole model under the profiler, with and without autocast: every op is entered once per call
// (an op with two entry lines recursed without end when profiling), and its layers are recorded.
TEST(Profiler, AGptStepIsRecordedOpByOp) {
  models::GPTConfig cfg;
  cfg.block_size = 16;
  cfg.vocab_size = 32;
  cfg.n_layer = 1;
  cfg.n_head = 2;
  cfg.n_embd = 16;
  models::GPT gpt(cfg);
  Tensor idx = randint(0, 32, {2, 16}, TensorOptions(kInt64));
  for (bool autocast_on : {false, true}) {
    Profile prof({.record_shapes = true});
    prof.start();
    {
      amp::autocast region(kCPU, kBFloat16, autocast_on);
      gpt.forward(idx).to(kFloat32).sum().backward();
    }
    prof.stop();
    std::vector<Event> events = prof.events();
    // Three LayerNorms (ln_1, ln_2, ln_f), each entered as nn::functional::layer_norm and, inside
    // it, as the op: 6 events, where an op entered twice per call would make more (or no end).
    EXPECT_EQ(named(events, "layer_norm").size(), 6u);
    EXPECT_FALSE(named(events, "scaled_dot_product_attention").empty());
    EXPECT_FALSE(named(events, "NativeLayerNormBackward0").empty());
  }
}

TEST(Profiler, OptimizerStepIsOneEvent) {
  Tensor p = ones({3}).requires_grad_();
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  p.sum().backward();
  Profile prof;
  prof.start();
  opt.step();
  prof.stop();
  std::vector<Event> steps = named(prof.events(), "Optimizer.step#SGD.step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, EventKind::Optimizer);
}

}  // namespace
}  // namespace ember
