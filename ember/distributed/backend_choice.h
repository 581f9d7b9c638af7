// Which process-group backend a job gets: what "auto" means, and NCCL's one GPU per rank, decided
// from facts about the build and the machine, so that the rule can be tested without them.
#pragma once

#include <functional>
#include <string>

namespace ember::distributed {

/// What the choice depends on.
struct BackendFacts {
  bool nccl_built = false;
  bool mpi_built = false;
  /// The visible CUDA devices; asked only when the answer depends on them, since asking starts
  /// CUDA, which a CPU-only job must not do (a child it forks could no longer use CUDA).
  std::function<int()> gpus;
  /// The ranks on this machine (the launcher's LOCAL_WORLD_SIZE); 0 when unknown.
  int local_world_size = 0;
};

/// "gloo", "nccl" or "mpi" for `requested` ("gloo", "nccl", "mpi" or "auto"). "auto" is NCCL when
/// it is built and each local rank can have a GPU of its own, else Gloo. "nccl" with more local
/// ranks than GPUs is an error that says so: NCCL cannot put two ranks of a group on one GPU
/// (ncclCommInitRank fails with "invalid usage", in PyTorch too).
std::string choose_backend(const std::string& requested, const BackendFacts& facts);

}  // namespace ember::distributed
