// The launcher behind `ember launch` (like torchrun): starts this node's ranks with the
// environment env:// rendezvous reads, and ends them all when one fails, naming it.
#pragma once

#include <string>
#include <vector>

namespace ember::distributed {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool prefix_output = false;  // "[rank R] " before every line of each rank's output
  int grace_seconds = 5;       // after SIGTERM, before SIGKILL
};

/// Runs `command` (program and arguments, looked up in PATH) as ranks node_rank * nproc_per_node
/// + 0 .. nproc_per_node - 1 and waits for them. Returns 0 when every rank exits with 0;
/// otherwise reports the first failing rank on stderr (of ranks found ended together, one killed
/// by a signal before one that exited with an error), ends the others (SIGTERM, then SIGKILL after
/// grace_seconds) and returns its exit code (128 + signal for a signal). SIGINT, SIGTERM and
/// SIGHUP sent to the caller meanwhile are passed to every rank, and the call returns 128 + signal
/// once they have ended.
int launch(const LaunchOptions& options, const std::vector<std::string>& command);

}  // namespace ember::distributed
