// The process group over MPI (Open MPI): ranks and world size come from mpirun. When ember is
// built without MPI, make_mpi_process_group() is an error that says so (no_mpi/).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

/// Whether this build of ember has the MPI backend.
bool mpi_available();

/// The group of every process mpirun started (MPI_COMM_WORLD). MPI is initialised by the
/// group's thread and finalised when the group is destroyed (once per process: MPI cannot be
/// initialised again). An operation not done within `timeout` is an error naming it (MPI itself
/// never times out).
std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds timeout);

/// new_group over MPI: the group of `ranks` (ranks of `parent`, an mpi group, in the new group's
/// order) on a communicator of its own, made with MPI_Comm_create_group. Only the listed ranks
/// call it; `tag` tells apart groups made at the same time (the same on every listed rank).
std::shared_ptr<ProcessGroup> make_mpi_subgroup(ProcessGroup& parent, const std::vector<int>& ranks,
                                                int tag);

}  // namespace ember::distributed
