#include "ember/distributed/elastic_agent.h"

#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "ember/core/error.h"
#include "ember/distributed/error_file.h"
#include "ember/distributed/rendezvous.h"
#include "ember/distributed/worker_group.h"

namespace ember::distributed {
namespace {

std::vector<WorkerSpec> elastic_specs(const LaunchOptions& o, const RendezvousInfo& info,
                                      const ErrorFiles& errors) {
  const RendezvousNode& master = info.nodes.front();
  std::vector<WorkerSpec> specs;
  for (int local = 0; local < o.nproc_per_node; ++local) {
    int rank = info.rank_offset() + local;
    std::string world = std::to_string(info.world_size());
    specs.push_back(
        {rank,
         local,
         {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(local),
          "WORLD_SIZE=" + world, "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node),
          "GROUP_RANK=" + std::to_string(info.group_rank),
          "GROUP_WORLD_SIZE=" + std::to_string(info.nodes.size()),
          "ROLE_RANK=" + std::to_string(rank), "ROLE_WORLD_SIZE=" + world,
          "MASTER_ADDR=" + master.address, "MASTER_PORT=" + std::to_string(master.master_port),
          "TORCHELASTIC_RESTART_COUNT=" + std::to_string(info.restart_count),
          "TORCHELASTIC_MAX_RESTARTS=" + std::to_string(o.max_restarts),
          "TORCHELASTIC_RUN_ID=" + o.rdzv_id},
         errors.path(detail::str_cat("round", info.round, "-local", local))});
  }
  return specs;
}

// "restart 0: rank 1 (local rank 1) on node 1 (10.1.0.2, pid 345) exited with code 1: <message>"
JobFailure describe_failure(const RendezvousInfo& info, const std::string& address,
                            const WorkerExit& e) {
  std::string text = detail::str_cat("restart ", info.restart_count, ": rank ", e.rank,
                                     " (local rank ", e.local_rank, ") on node ", info.group_rank,
                                     " (", address, ", pid ", e.pid, ") ", e.describe());
  if (e.error) text += ": " + *e.error;
  return {info.restart_count, e.exit_code(), text};
}

// Ends the job for every node: reports every failure the store holds and returns the exit code.
int fail_job(Rendezvous& rdzv, const LaunchOptions& o, const std::string& why) {
  rdzv.mark_failed();
  std::vector<JobFailure> failures = rdzv.failures();
  std::string text = "ember launch: job '" + o.rdzv_id + "' failed: " + why;
  text += failures.empty() ? " (no rank failed)" : "; its failures:";
  for (const JobFailure& f : failures) text += "\n  " + f.text;
  report_line(text);
  // The first failure of the last round that had one: the likely cause of the end.
  int code = 1;
  for (auto it = failures.rbegin(); it != failures.rend(); ++it) {
    if (it->restart != failures.back().restart) break;
    code = it->exit_code;
  }
  return code;
}

// What the agent does when the round ends; returns whether the job goes on to the next round.
enum class Next { kRestart, kSucceeded, kSignaled };

Next end_round(Rendezvous& rdzv, WorkerGroup& group, const WatchResult& result, const RoundEnd& end,
               const RendezvousInfo& info, const LaunchOptions& o) {
  auto grace = std::chrono::seconds(o.grace_seconds);
  std::string node =
      detail::str_cat("ember launch: node ", info.group_rank, " (", rdzv.address(), ")");
  switch (result.kind) {
    case WatchResult::kSucceeded:
      rdzv.mark_succeeded();
      report_line(node + ": every local rank ended well");
      return Next::kSucceeded;
    case WatchResult::kSignaled:
      report_line(node + ": got " + signal_text(result.signal) + ", passed it to " +
                  std::to_string(group.running()) + " local rank(s)");
      group.stop(result.signal, grace);
      rdzv.record_failure(
          {info.restart_count, 128 + result.signal,
           detail::str_cat("restart ", info.restart_count, ": node ", info.group_rank, " (",
                           rdzv.address(), ") got ", signal_text(result.signal))});
      rdzv.request_restart();
      return Next::kSignaled;
    case WatchResult::kFailed:
      for (const WorkerExit& e : result.failures) {
        JobFailure failure = describe_failure(info, rdzv.address(), e);
        report_line("ember launch: " + failure.text);
        rdzv.record_failure(failure);
      }
      rdzv.request_restart();
      report_line(node + ": stopping " + std::to_string(group.running()) + " local rank(s)");
      break;
    case WatchResult::kInterrupted:
      if (end.kind == RoundEnd::kAgentLost) {
        rdzv.record_failure({info.restart_count, 1, end.why});
        report_line("ember launch: " + end.why);
      }
      if (end.kind != RoundEnd::kRequested) rdzv.request_restart();
      report_line(node + ": " +
                  (end.kind == RoundEnd::kNodesWaiting ? end.why + ", restarting the group"
                                                       : std::string("the group restarts")) +
                  "; stopping " + std::to_string(group.running()) + " local rank(s)");
      break;
  }
  group.stop(SIGTERM, grace);
  return Next::kRestart;
}

// One round's ranks, from their start to the end of the round.
Next run_round(Rendezvous& rdzv, const LaunchOptions& o, const std::vector<std::string>& command,
               const RendezvousInfo& info, const ErrorFiles& errors, int& signal) {
  // Signals are passed to the ranks while they run; between rounds (in the rendezvous) their
  // default action ends the agent, which has nothing to stop then.
  SignalForwarding signals;
  WorkerGroup group(command, elastic_specs(o, info, errors), o.prefix_output);
  RoundEnd end;
  WatchResult result = watch(
      group, signals,
      [&] {
        end = rdzv.check_round();
        return end.kind != RoundEnd::kNone;
      },
      o.monitor_interval);
  signal = result.signal;
  return end_round(rdzv, group, result, end, info, o);
}

int fail_after_restarts(Rendezvous& rdzv, const LaunchOptions& o, int restarts) {
  return fail_job(rdzv, o,
                  detail::str_cat("its ranks failed ", restarts,
                                  " times, more than --max-restarts ", o.max_restarts));
}

int run_rounds(Rendezvous& rdzv, const LaunchOptions& o, const std::vector<std::string>& command) {
  ErrorFiles errors("ember-elastic");
  for (;;) {
    RendezvousInfo info;
    try {
      info = rdzv.next_rendezvous();
    } catch (const Error& e) {
      if (rdzv.job_state() == 1) {
        report_line("ember launch: job '" + o.rdzv_id + "' already succeeded; nothing to do");
        return 0;
      }
      return fail_job(rdzv, o, e.what());
    }
    if (info.restart_count > o.max_restarts)
      return fail_after_restarts(rdzv, o, info.restart_count);
    report_line(detail::str_cat("ember launch: round ", info.round, ": node ", info.group_rank,
                                " of ", info.nodes.size(), " (", rdzv.address(), "), ranks ",
                                info.rank_offset(), "-", info.rank_offset() + o.nproc_per_node - 1,
                                " of ", info.world_size(), ", restart ", info.restart_count));
    int signal = 0;
    Next next = run_round(rdzv, o, command, info, errors, signal);
    if (next == Next::kSucceeded) return 0;
    if (next == Next::kSignaled) return 128 + signal;
    if (int restarts = rdzv.restart_count(); restarts > o.max_restarts)
      return fail_after_restarts(rdzv, o, restarts);
  }
}

}  // namespace

std::pair<std::string, int> parse_endpoint(const std::string& endpoint) {
  std::string host = endpoint, port = "29400";
  if (!endpoint.empty() && endpoint.front() == '[') {  // [v6]:port
    size_t close = endpoint.find(']');
    EMBER_CHECK(close != std::string::npos, "[launch] malformed endpoint '", endpoint, "'");
    host = endpoint.substr(1, close - 1);
    if (close + 1 < endpoint.size()) {
      EMBER_CHECK(endpoint[close + 1] == ':', "[launch] malformed endpoint '", endpoint, "'");
      port = endpoint.substr(close + 2);
    }
  } else if (size_t colon = endpoint.rfind(':');
             colon != std::string::npos && endpoint.find(':') == colon) {
    host = endpoint.substr(0, colon);
    port = endpoint.substr(colon + 1);
  }
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  EMBER_CHECK(!host.empty() && !port.empty() && end && *end == '\0' && p > 0 && p < 65536,
              "[launch] expected --rdzv-endpoint host:port, got '", endpoint, "'");
  return {host, static_cast<int>(p)};
}

int run_elastic_agent(const LaunchOptions& o, const std::vector<std::string>& command) {
  int max_nodes = o.max_nnodes == 0 ? o.nnodes : o.max_nnodes;
  EMBER_CHECK(o.nproc_per_node >= 1 && o.nnodes >= 1 && max_nodes >= o.nnodes,
              "[launch] expected --nproc-per-node >= 1 and --nnodes MIN:MAX with 1 <= MIN <= MAX, "
              "got ",
              o.nproc_per_node, " and ", o.nnodes, ":", max_nodes);
  EMBER_CHECK(o.node_rank == 0,
              "[launch] --node-rank is for a fixed --nnodes; an elastic job (--rdzv-endpoint, "
              "--max-restarts or --nnodes MIN:MAX) numbers its nodes in the rendezvous");
  EMBER_CHECK(o.max_restarts >= 0, "[launch] expected --max-restarts >= 0, got ", o.max_restarts);
  RendezvousOptions ro;
  std::tie(ro.host, ro.port) = o.rdzv_endpoint.empty() ? std::pair{o.master_addr, o.master_port}
                                                       : parse_endpoint(o.rdzv_endpoint);
  ro.run_id = o.rdzv_id;
  ro.min_nodes = o.nnodes;
  ro.max_nodes = max_nodes;
  ro.local_world_size = o.nproc_per_node;
  ro.join_timeout = o.join_timeout;
  ro.last_call_timeout = o.last_call_timeout;
  Rendezvous rdzv(ro);
  report_line(detail::str_cat("ember launch: agent ", rdzv.agent_id(), " of job '", o.rdzv_id,
                              "' at ", rdzv.address(),
                              rdzv.serves_store() ? ", serving the rendezvous store on port " : "",
                              rdzv.serves_store() ? std::to_string(ro.port) : ""));
  int code = 0;
  try {
    code = run_rounds(rdzv, o, command);
  } catch (const Error& e) {
    report_line(std::string("ember launch: ") + e.what());
    code = 1;
  }
  if (rdzv.serves_store()) rdzv.wait_for_other_agents();
  return code;
}

}  // namespace ember::distributed
