// The elastic agent behind `ember launch --nnodes MIN:MAX --max-restarts N --rdzv-endpoint H:P`
// (torchrun's): one per node, it joins a rendezvous (rendezvous.h), starts this node's ranks,
// and when a rank fails, an agent is lost or a node waits to join, it stops its ranks and restarts
// the group with the nodes there are, with new RANK / WORLD_SIZE / LOCAL_RANK,
// TORCHELASTIC_RESTART_COUNT and the same TORCHELASTIC_RUN_ID. It does not checkpoint: the program
// resumes from its own checkpoint (distributed/training_checkpoint.h).
#pragma once

#include <string>
#include <vector>

#include "ember/distributed/launch.h"

namespace ember::distributed {

/// Runs this node's part of an elastic job until it succeeds (0), fails for good (after
/// max_restarts restarts, or when fewer than options.nnodes nodes are left: the code of the
/// failure that ended it, after a report on stderr that names every failure of the job: rank,
/// node, exit code or signal, and the message of the exception the rank recorded), or a signal
/// stops it (128 + signal). An ember::Error when the rendezvous cannot be reached.
int run_elastic_agent(const LaunchOptions& options, const std::vector<std::string>& command);

/// "host:port" ("[v6]:port"; a missing port is 29400, torchrun's) into host and port.
std::pair<std::string, int> parse_endpoint(const std::string& endpoint);

}  // namespace ember::distributed
