// The process group over NCCL (CUDA tensors, one GPU per rank). Collectives run on the group's
// own stream, ordered against the caller's current stream by events: no device-wide
// synchronisation. Built with the CUDA backend when NCCL is found; otherwise
// make_nccl_process_group() is an error that says so (no_nccl/).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

/// Whether this build of ember has the NCCL backend.
bool nccl_available();

/// Joins the group on the current CUDA device: rank 0 makes NCCL's unique id and shares it
/// through `store`. global_ranks: for a group of new_group's, the default group's rank of each of
/// its ranks, so that its errors name a dead rank in both numberings; empty for the default group.
std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank,
                                                      int size, std::chrono::milliseconds timeout,
                                                      const std::vector<int>& global_ranks = {});

}  // namespace ember::distributed
