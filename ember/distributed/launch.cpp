#include "ember/distributed/launch.h"

#include <signal.h>

#include "ember/core/error.h"
#include "ember/distributed/elastic_agent.h"
#include "ember/distributed/error_file.h"
#include "ember/distributed/worker_group.h"

namespace ember::distributed {
namespace {

// The ranks of this node in a job of fixed size.
std::vector<WorkerSpec> fixed_specs(const LaunchOptions& o, const ErrorFiles& errors) {
  int world = o.nnodes * o.nproc_per_node;
  std::vector<WorkerSpec> specs;
  for (int local = 0; local < o.nproc_per_node; ++local) {
    int rank = o.node_rank * o.nproc_per_node + local;
    specs.push_back({rank,
                     local,
                     {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(local),
                      "WORLD_SIZE=" + std::to_string(world),
                      "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node),
                      "GROUP_RANK=" + std::to_string(o.node_rank), "MASTER_ADDR=" + o.master_addr,
                      "MASTER_PORT=" + std::to_string(o.master_port)},
                     errors.path("local" + std::to_string(local))});
  }
  return specs;
}

}  // namespace

int launch(const LaunchOptions& o, const std::vector<std::string>& command) {
  EMBER_CHECK(!command.empty(), "[launch] expected a program to run");
  if (o.elastic()) return run_elastic_agent(o, command);
  EMBER_CHECK(o.nproc_per_node >= 1 && o.nnodes >= 1 && o.node_rank >= 0 && o.node_rank < o.nnodes,
              "[launch] expected --nproc-per-node >= 1 and 0 <= --node-rank < --nnodes, got ",
              o.nproc_per_node, ", ", o.node_rank, " and ", o.nnodes);
  SignalForwarding signals;
  ErrorFiles errors("ember-launch");
  WorkerGroup group(command, fixed_specs(o, errors), o.prefix_output);
  auto grace = std::chrono::seconds(o.grace_seconds);
  WatchResult result = watch(group, signals);
  int exit_code = 0;
  if (result.kind == WatchResult::kSignaled) {
    report_line("ember launch: got " + signal_text(result.signal) + ", passed it to " +
                std::to_string(group.running()) + " local rank(s)");
    group.stop(result.signal, grace);
  } else if (result.kind == WatchResult::kFailed) {
    // The root cause first (Note [The rank that failed first]), then what followed from it.
    exit_code = result.failures.front().exit_code();
    for (size_t i = 0; i < result.failures.size(); ++i) {
      const WorkerExit& e = result.failures[i];
      std::string line = detail::str_cat("ember launch: ", i == 0 ? "" : "then ", "rank ", e.rank,
                                         " (pid ", e.pid, ") ", e.describe());
      if (e.error) line += ": " + *e.error;
      report_line(line);
    }
    report_line("ember launch: ending the other " + std::to_string(group.running()) +
                " local rank(s)");
    group.stop(SIGTERM, grace);
  }
  if (int sig = signals.received(); sig != 0) exit_code = 128 + sig;
  return exit_code;
}

}  // namespace ember::distributed
