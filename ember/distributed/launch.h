// The launcher behind `ember launch` (like torchrun): starts this node's ranks with the
// environment env:// rendezvous reads, and ends them all when one fails, naming it. Elastic (with
// a range of nodes, restarts or a rendezvous endpoint), it restarts the group instead
// (elastic_agent.h).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ember::distributed {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;      // the nodes of a fixed job; the least number of an elastic one
  int max_nnodes = 0;  // elastic: the most (0: nnodes)
  int node_rank = 0;   // fixed jobs only: elastic ones number their nodes in the rendezvous
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool prefix_output = false;  // "[rank R] " before every line of each rank's output
  int grace_seconds = 5;       // after SIGTERM, before SIGKILL

  // Elastic jobs (torchrun's options of the same names).
  int max_restarts = 0;       // restarts after failures before the job fails
  std::string rdzv_endpoint;  // "host:port" of the rendezvous store ("": master_addr:master_port)
  std::string rdzv_id = "none";  // the job's id: agents of one job give the same
  std::chrono::milliseconds join_timeout = std::chrono::seconds(600);  // to reach min nodes
  // After min nodes joined a round: how long more may join (unless every live agent did).
  std::chrono::milliseconds last_call_timeout = std::chrono::seconds(30);
  // How often the agent asks the rendezvous store whether the group must restart.
  std::chrono::milliseconds monitor_interval = std::chrono::milliseconds(100);

  /// Whether these options ask for the elastic agent: a range of nodes, restarts or an endpoint.
  bool elastic() const {
    return (max_nnodes != 0 && max_nnodes != nnodes) || max_restarts > 0 || !rdzv_endpoint.empty();
  }
};

/// Runs `command` (program and arguments, looked up in PATH) as ranks node_rank * nproc_per_node
/// + 0 .. nproc_per_node - 1 and waits for them. Returns 0 when every rank exits with 0;
/// otherwise reports the first failing rank on stderr (of ranks found ended together, one killed
/// by a signal before one that exited with an error), ends the others (SIGTERM, then SIGKILL after
/// grace_seconds) and returns its exit code (128 + signal for a signal). SIGINT, SIGTERM and
/// SIGHUP sent to the caller meanwhile are passed to every rank, and the call returns 128 + signal
/// once they have ended. With options.elastic(), runs the elastic agent (run_elastic_agent).
int launch(const LaunchOptions& options, const std::vector<std::string>& command);

}  // namespace ember::distributed
