// The profiler on a GPU: with ProfilerActivity::CUDA, CUPTI's kernel records come back as device
// events linked to the ops that launched them, the table gets its CUDA columns, and the trace
// draws them on the GPU's lanes.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ember/ember.h"
#include "tests/cuda/cuda_test_util.h"

namespace ember {
namespace {

using namespace ember::testing;
using profiler::Event;
using profiler::EventKind;

TEST(CudaProfiler, KernelsAreLinkedToTheOpsThatLaunchedThem) {
  EMBER_REQUIRE_CUDA();
  Tensor a = randn({512, 512}).to(gpu()), b = randn({512, 512}).to(gpu());
  profiler::Profile prof(
      {.activities = {profiler::ProfilerActivity::CPU, profiler::ProfilerActivity::CUDA}});
  prof.start();
  Tensor c = matmul(a, b).relu();
  Tensor back = c.cpu();
  prof.stop();
  std::vector<Event> events = prof.events();
  std::map<uint64_t, std::string> op_of;
  for (const Event& e : events)
    if (!e.on_device && e.id) op_of[e.id] = e.name;
  int kernels = 0, copies = 0;
  std::set<std::string> launchers;
  for (const Event& e : events) {
    if (!e.on_device) continue;
    EXPECT_GE(e.end_ns, e.start_ns) << e.name;
    EXPECT_TRUE(e.device.is_cuda()) << e.name;
    kernels += e.kind == EventKind::Kernel;
    copies += e.kind == EventKind::Memcpy;
    if (op_of.count(e.launched_by)) launchers.insert(op_of[e.launched_by]);
  }
  EXPECT_GE(kernels, 2);  // the product and the relu
  EXPECT_GE(copies, 1);   // the copy back
  EXPECT_TRUE(launchers.count("matmul") || launchers.count("mm")) << launchers.size();
  EXPECT_TRUE(launchers.count("relu"));
  std::string table = prof.table("cuda_time_total", 10);
  EXPECT_NE(table.find("Self CUDA"), std::string::npos) << table;
  EXPECT_NE(table.find("Self CUDA time total:"), std::string::npos) << table;
  nlohmann::json trace = nlohmann::json::parse(prof.chrome_trace());
  int on_gpu_lane = 0;
  for (const auto& e : trace["traceEvents"])
    on_gpu_lane += e["ph"] == "X" && e["cat"] == "kernel" && e["pid"] == 0;
  EXPECT_EQ(on_gpu_lane, kernels);
}

}  // namespace
}  // namespace ember
