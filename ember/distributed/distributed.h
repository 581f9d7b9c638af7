// torch.distributed's functions: a default process group per process (or per thread, for ranks
// that are threads of one process), made by init_process_group, and collectives on it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

/// The backends this build has, e.g. "gloo, mpi".
std::string available_backends();

/// Joins the default group. backend: "gloo", "mpi", "nccl" or "auto" (NCCL when it is built and
/// each local rank has a GPU of its own, else Gloo; see backend_choice.h).
/// init_method: "env://" (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; under mpirun, Open MPI's
/// OMPI_COMM_WORLD_RANK/SIZE), "tcp://host:port" or "file:///path" (a fresh path per job).
/// world_size and rank of -1 are read from the environment.
void init_process_group(const std::string& backend = "gloo",
                        const std::string& init_method = "env://", int world_size = -1,
                        int rank = -1, std::chrono::milliseconds timeout = kDefaultTimeout);
/// Joins the default group through a store the caller made.
void init_process_group(const std::string& backend, std::shared_ptr<Store> store, int world_size,
                        int rank, std::chrono::milliseconds timeout = kDefaultTimeout);
bool is_initialized();
/// Leaves the default group and every group made by new_group.
void destroy_process_group();
int get_rank(ProcessGroup* group = nullptr);
int get_world_size(ProcessGroup* group = nullptr);
/// The default group; an error before init_process_group.
ProcessGroup& default_group();
std::shared_ptr<ProcessGroup> default_group_ptr();
/// A group of some ranks (numbered by their place in `ranks`). Every rank of the default group
/// must call it, in the same order; ranks outside get nullptr.
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

/// Runs fn(rank) on world_size threads of this process, each one rank of a Gloo group over an
/// in-memory store (the thread's default group): the real Gloo algorithms over loopback TCP.
/// Waits for every thread and rethrows the first error, naming its rank.
void run_threads(int world_size, const std::function<void(int rank)>& fn,
                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The collectives on a group (the default one when group is null). Without async_op they wait
// and return a completed Work.
std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op = ReduceOp::SUM,
                                 ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> broadcast(Tensor tensor, int src, ProcessGroup* group = nullptr,
                                bool async_op = false);
std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op = ReduceOp::SUM,
                             ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input,
                                 ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> gather(Tensor input, std::vector<Tensor> outputs, int dst,
                             ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src,
                              ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                     ReduceOp op = ReduceOp::SUM, ProcessGroup* group = nullptr,
                                     bool async_op = false);
/// The flat forms (ProcessGroup::all_gather_into_tensor, reduce_scatter_tensor).
std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input,
                                             ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input,
                                            ReduceOp op = ReduceOp::SUM,
                                            ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_to_all(Tensor output, Tensor input, ProcessGroup* group = nullptr,
                                 bool async_op = false);
std::shared_ptr<Work> barrier(ProcessGroup* group = nullptr, bool async_op = false);
std::shared_ptr<Work> send(Tensor tensor, int dst, ProcessGroup* group = nullptr, int tag = 0);
std::shared_ptr<Work> recv(Tensor tensor, int src, ProcessGroup* group = nullptr, int tag = 0);
/// Non-blocking send and recv.
std::shared_ptr<Work> isend(Tensor tensor, int dst, ProcessGroup* group = nullptr, int tag = 0);
std::shared_ptr<Work> irecv(Tensor tensor, int src, ProcessGroup* group = nullptr, int tag = 0);

}  // namespace ember::distributed
