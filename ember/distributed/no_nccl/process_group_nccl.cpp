// Built without CUDA or NCCL: the nccl backend is a clear error, not a link failure.
#include "ember/distributed/process_group_nccl.h"
#include "ember/core/error.h"
#include "ember/distributed/distributed.h"

namespace ember::distributed {

bool nccl_available() { return false; }

std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store>, int, int,
                                                      std::chrono::milliseconds,
                                                      const std::vector<int>&) {
  EMBER_FAIL(
      "[init_process_group] this ember was built without NCCL (it comes with the CUDA backend); "
      "available backends: ",
      available_backends());
}

}  // namespace ember::distributed
