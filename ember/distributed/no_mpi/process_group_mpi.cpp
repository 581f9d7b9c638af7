// Built when MPI was not found: the mpi backend is a clear error, not a link failure.
#include "ember/distributed/process_group_mpi.h"
#include "ember/core/error.h"
#include "ember/distributed/distributed.h"

namespace ember::distributed {

bool mpi_available() { return false; }

std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds) {
  EMBER_FAIL(
      "[init_process_group] this ember was built without MPI (install libopenmpi-dev and reconfigure); "
      "available backends: ",
      available_backends());
}

std::shared_ptr<ProcessGroup> make_mpi_subgroup(ProcessGroup&, const std::vector<int>&, int) {
  EMBER_FAIL("[new_group] this ember was built without MPI; available backends: ",
             available_backends());
}

}  // namespace ember::distributed
