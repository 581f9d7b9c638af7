#include "ember/distributed/backend_choice.h"

#include <algorithm>

#include "ember/core/error.h"
#include "ember/distributed/distributed.h"

namespace ember::distributed {

std::string choose_backend(const std::string& requested, const BackendFacts& facts) {
  // Without a launcher's LOCAL_WORLD_SIZE, one rank per machine is all that can be assumed.
  const int local_ranks = std::max(1, facts.local_world_size);
  if (requested == "auto") return facts.nccl_built && facts.gpus() >= local_ranks ? "nccl" : "gloo";
  if (requested == "gloo") return "gloo";
  if (requested == "nccl" && facts.nccl_built) {
    int gpus = facts.gpus();
    // No GPU at all: joining the group says why (no driver, CUDA_VISIBLE_DEVICES, ...).
    EMBER_CHECK(
        gpus == 0 || local_ranks <= gpus,
        "[init_process_group] nccl needs a GPU for each rank, but LOCAL_WORLD_SIZE=", local_ranks,
        " ranks share this machine's ", gpus,
        " CUDA device(s), and NCCL cannot put two ranks of a group on one GPU; start at most ",
        gpus, " rank(s) per machine, or use gloo (\"auto\" picks it here)");
    return "nccl";
  }
  if (requested == "mpi" && facts.mpi_built) return "mpi";
  EMBER_CHECK(requested == "nccl" || requested == "mpi", "[init_process_group] unknown backend '",
              requested, "'; expected gloo, nccl, mpi or auto");
  EMBER_FAIL("[init_process_group] backend '", requested,
             "' is not built in this ember; available backends: ", available_backends());
}

}  // namespace ember::distributed
