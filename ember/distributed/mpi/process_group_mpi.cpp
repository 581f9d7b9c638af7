// ProcessGroup over MPI. One thread per process owns MPI (it initialises, runs every call of
// every group in queue order, and finalises: MPI_THREAD_SERIALIZED is enough). The default group
// is MPI_COMM_WORLD; new_group makes a communicator with MPI_Comm_create_group, which only the
// listed ranks call. Reductions use MPI user ops over the shared reduction functions, so every
// dtype (float16 and bfloat16 too) reduces as in Gloo.
#include "ember/distributed/process_group_mpi.h"

// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "ember/core/error.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/host_buffer.h"
#include "ember/distributed/reduce_functions.h"
#include "ember/distributed/task_queue.h"

namespace ember::distributed {
namespace {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  EMBER_FAIL("[mpi] ", call, " failed: ", std::string(text, static_cast<size_t>(len)));
}
#define EMBER_MPI_CHECK(call) check_mpi((call), #call)

// MPI calls its user functions as inout[i] = in[i] op inout[i].
template <typename T, typename Op>
void mpi_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_elements<T, Op>(inout, in, inout, static_cast<size_t>(*len));
}

class MpiWorker;

// What a queued call needs: its group's communicator, this rank in it, the group's size, and
// the worker's datatypes and ops. Calls capture no group, which may be gone when they run.
struct Call {
  MPI_Comm comm;
  int rank;
  int size;
  MpiWorker& mpi;
};

// The thread that owns MPI, with its queue. Shared by the thread and MpiRuntime, so that a thread
// left stuck in MPI keeps what it uses alive.
class MpiWorker {
 public:
  using Task = std::function<void(MpiWorker&)>;

  void push(Task task) { queue_.push(std::move(task)); }

  // The thread's body: initialises MPI (reporting this rank and the world size through `ready`),
  // runs the queue until stopped and empty, finalises.
  void run(std::promise<std::pair<int, int>>& ready) {
    try {
      int provided = 0, rank = 0, size = 0;
      EMBER_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      EMBER_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
      EMBER_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
      ready.set_value({rank, size});
    } catch (...) {
      ready.set_exception(std::current_exception());
      return;
    }
    while (std::optional<Task> task = queue_.pop()) (*task)(*this);  // tasks catch their own errors
    set(drained_);
    for (auto& [key, op] : ops_) MPI_Op_free(&op);
    for (auto& [size, type] : types_) MPI_Type_free(&type);
    MPI_Finalize();
    set(exited_);
  }

  // Asks the thread to finish the queue and exit. Whether it did: false when a queued call is
  // still in MPI after `wait` (a hung or dead peer). MPI_Finalize is then not waited for, but
  // once the queue is done it is, however long it takes: it is collective, and returns when
  // every rank has called it, so a rank that finished first waits there for the slowest (a rank
  // that left without finalising is one mpirun reports as "exiting improperly", failing the job).
  bool stop(std::chrono::milliseconds wait) {
    queue_.close();
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, wait, [this] { return drained_; })) return false;
    cv_.wait(lock, [this] { return exited_; });
    return true;
  }

  // An MPI datatype of itemsize bytes per dtype, and a user op per (dtype, op). Worker only.
  MPI_Datatype type(DType dtype) {
    size_t size = itemsize(dtype);
    auto it = types_.find(size);
    if (it != types_.end()) return it->second;
    MPI_Datatype t;
    EMBER_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &t));
    EMBER_MPI_CHECK(MPI_Type_commit(&t));
    return types_[size] = t;
  }
  MPI_Op op(DType dtype, ReduceOp op) {
    auto key = std::make_pair(static_cast<int>(dtype), static_cast<int>(op));
    auto it = ops_.find(key);
    if (it != ops_.end()) return it->second;
    MPI_User_function* fn = dispatch_reduce(dtype, op, []<typename T, typename Op>() {
      return static_cast<MPI_User_function*>(&mpi_reduce<T, Op>);
    });
    MPI_Op created;
    EMBER_MPI_CHECK(MPI_Op_create(fn, /*commute=*/1, &created));
    return ops_[key] = created;
  }

 private:
  void set(bool& flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    flag = true;
    cv_.notify_all();
  }

  std::map<size_t, MPI_Datatype> types_;
  std::map<std::pair<int, int>, MPI_Op> ops_;
  TaskQueue<Task> queue_;
  std::mutex mutex_;  // guards drained_ and exited_
  bool drained_ = false;  // the queue is closed and every task has run
  bool exited_ = false;   // MPI is finalised
  std::condition_variable cv_;
};

// MPI for this process: started with the default group, finalised when the last group (default
// or new_group's) is destroyed.
class MpiRuntime {
 public:
  MpiRuntime() : worker_(std::make_shared<MpiWorker>()) {
    std::promise<std::pair<int, int>> ready;
    std::future<std::pair<int, int>> started = ready.get_future();
    thread_ = std::thread([worker = worker_, &ready] { worker->run(ready); });
    try {
      std::tie(world_rank_, world_size_) = started.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }

  // A call stuck in MPI (a hung or dead peer) never returns: the thread is then left behind
  // rather than joined, and MPI is not finalised (mpirun ends the job). See MpiWorker::stop.
  ~MpiRuntime() {
    if (worker_->stop(std::chrono::seconds(2)))
      thread_.join();
    else
      thread_.detach();
  }

  MpiWorker& worker() { return *worker_; }
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

 private:
  std::shared_ptr<MpiWorker> worker_;
  std::thread thread_;
  int world_rank_ = 0;
  int world_size_ = 1;
};

void finish_reduction(HostBuffer& buf, DType dtype, ReduceOp op, int size) {
  if (op == ReduceOp::AVG) divide_elements(buf.data(), dtype, buf.numel(), size);
  buf.write_back();
}

int count(size_t n) {
  EMBER_CHECK(n <= static_cast<size_t>(INT32_MAX), "[mpi] a message of ", n,
              " elements is over MPI's int count");
  return static_cast<int>(n);
}

class ProcessGroupMPI final : public ProcessGroup {
 public:
  // owns_comm: a communicator of new_group's, freed with the group (not MPI_COMM_WORLD).
  ProcessGroupMPI(std::shared_ptr<MpiRuntime> runtime, MPI_Comm comm, int rank, int size,
                  std::chrono::milliseconds timeout, bool owns_comm)
      : ProcessGroup(rank, size),
        runtime_(std::move(runtime)),
        comm_(comm),
        owns_comm_(owns_comm),
        timeout_(timeout) {}

  ~ProcessGroupMPI() override {
    if (owns_comm_)
      runtime_->worker().push([comm = comm_](MpiWorker&) mutable { MPI_Comm_free(&comm); });
  }

  std::string backend() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }
  std::chrono::milliseconds wait_slack() const override { return std::chrono::milliseconds(0); }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override {
    check_reduce_op(op, tensor.dtype(), "all_reduce");
    auto buf = std::make_shared<HostBuffer>(tensor, "all_reduce");
    DType dtype = tensor.dtype();
    return enqueue("all_reduce", {tensor}, [buf, dtype, op](const Call& c) {
      EMBER_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf->data(), count(buf->numel()),
                                    c.mpi.type(dtype), c.mpi.op(dtype, op), c.comm));
      finish_reduction(*buf, dtype, op, c.size);
    });
  }

  std::shared_ptr<Work> broadcast(Tensor tensor, int src) override {
    check_rank(src, "broadcast");
    auto buf = std::make_shared<HostBuffer>(tensor, "broadcast");
    return enqueue("broadcast", {tensor}, [buf, src](const Call& c) {
      EMBER_MPI_CHECK(MPI_Bcast(buf->data(), count(buf->nbytes()), MPI_BYTE, src, c.comm));
      buf->write_back();
    });
  }

  std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op) override {
    check_rank(dst, "reduce");
    check_reduce_op(op, tensor.dtype(), "reduce");
    auto buf = std::make_shared<HostBuffer>(tensor, "reduce");
    DType dtype = tensor.dtype();
    return enqueue("reduce", {tensor}, [buf, dtype, op, dst](const Call& c) {
      void* data = buf->data();
      EMBER_MPI_CHECK(MPI_Reduce(c.rank == dst ? MPI_IN_PLACE : data, data, count(buf->numel()),
                                 c.mpi.type(dtype), c.mpi.op(dtype, op), dst, c.comm));
      if (c.rank == dst) finish_reduction(*buf, dtype, op, c.size);
    });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input) override {
    check_list(outputs, input, "all_gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "all_gather");
    return enqueue("all_gather", {input}, [in, outputs](const Call& c) {
      HostScratch flat(in->nbytes() * c.size);
      EMBER_MPI_CHECK(MPI_Allgather(in->data(), count(in->nbytes()), MPI_BYTE, flat.data(),
                                    count(in->nbytes()), MPI_BYTE, c.comm));
      unpack_gathered(flat.data(), outputs, in->nbytes(), "all_gather");
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int dst) override {
    check_rank(dst, "gather");
    if (rank_ == dst) check_list(outputs, input, "gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "gather");
    return enqueue("gather", {input}, [in, outputs, dst](const Call& c) {
      HostScratch flat(c.rank == dst ? in->nbytes() * c.size : 0);
      EMBER_MPI_CHECK(MPI_Gather(in->data(), count(in->nbytes()), MPI_BYTE, flat.data(),
                                 count(in->nbytes()), MPI_BYTE, dst, c.comm));
      if (c.rank == dst) unpack_gathered(flat.data(), outputs, in->nbytes(), "gather");
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src) override {
    check_rank(src, "scatter");
    if (rank_ == src) check_list(inputs, output, "scatter", "input");
    auto out = std::make_shared<HostBuffer>(output, "scatter");
    return enqueue("scatter", {output}, [out, inputs, src](const Call& c) {
      HostScratch flat(c.rank == src ? out->nbytes() * c.size : 0);
      for (size_t r = 0; r < inputs.size(); ++r)
        std::memcpy(flat.data() + r * out->nbytes(), inputs[r].contiguous().data_ptr(),
                    out->nbytes());
      EMBER_MPI_CHECK(MPI_Scatter(flat.data(), count(out->nbytes()), MPI_BYTE, out->data(),
                                  count(out->nbytes()), MPI_BYTE, src, c.comm));
      out->write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                       ReduceOp op) override {
    check_list(inputs, output, "reduce_scatter", "input");
    check_reduce_op(op, output.dtype(), "reduce_scatter");
    auto out = std::make_shared<HostBuffer>(output, "reduce_scatter");
    DType dtype = output.dtype();
    return enqueue("reduce_scatter", {output}, [out, inputs, dtype, op](const Call& c) {
      size_t n = out->nbytes();
      HostScratch flat(n * c.size);
      for (int r = 0; r < c.size; ++r)
        std::memcpy(flat.data() + r * n, inputs[r].contiguous().data_ptr(), n);
      EMBER_MPI_CHECK(MPI_Reduce_scatter_block(flat.data(), out->data(), count(out->numel()),
                                               c.mpi.type(dtype), c.mpi.op(dtype, op), c.comm));
      finish_reduction(*out, dtype, op, c.size);
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input) override {
    const char* name = "all_gather_into_tensor";
    check_flat(output, input, name, "output", "input");
    auto in = std::make_shared<HostBuffer>(input, name);
    auto out = std::make_shared<HostBuffer>(output, name);
    return enqueue(name, {input}, [in, out](const Call& c) {
      EMBER_MPI_CHECK(MPI_Allgather(in->data(), count(in->nbytes()), MPI_BYTE, out->data(),
                                    count(in->nbytes()), MPI_BYTE, c.comm));
      out->write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input, ReduceOp op) override {
    const char* name = "reduce_scatter_tensor";
    check_flat(input, output, name, "input", "output");
    check_reduce_op(op, output.dtype(), name);
    auto in = std::make_shared<HostBuffer>(input, name);
    auto out = std::make_shared<HostBuffer>(output, name);
    DType dtype = output.dtype();
    return enqueue(name, {output}, [in, out, dtype, op](const Call& c) {
      EMBER_MPI_CHECK(MPI_Reduce_scatter_block(in->data(), out->data(), count(out->numel()),
                                               c.mpi.type(dtype), c.mpi.op(dtype, op), c.comm));
      finish_reduction(*out, dtype, op, c.size);
    });
  }

  std::shared_ptr<Work> all_to_all(Tensor output, Tensor input) override {
    check_like(output, input, "all_to_all", "tensor");
    EMBER_CHECK(input.dim() >= 1 && input.size(0) % size_ == 0,
                "[all_to_all] expected dim 0 to divide into ", size_, " equal chunks, got shape ",
                input.sizes());
    auto in = std::make_shared<HostBuffer>(input, "all_to_all");
    auto out = std::make_shared<HostBuffer>(output, "all_to_all");
    return enqueue("all_to_all", {input}, [in, out](const Call& c) {
      int chunk = count(in->nbytes() / c.size);
      EMBER_MPI_CHECK(
          MPI_Alltoall(in->data(), chunk, MPI_BYTE, out->data(), chunk, MPI_BYTE, c.comm));
      out->write_back();
    });
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue("barrier", {}, [](const Call& c) { EMBER_MPI_CHECK(MPI_Barrier(c.comm)); });
  }

  // Blocking MPI_Send/MPI_Recv in queue order: a rank's sends and receives happen in the order
  // it calls them (as with blocking MPI).
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check_rank(dst, "send");
    auto buf = std::make_shared<HostBuffer>(tensor, "send");
    return enqueue("send", {tensor}, [buf, dst, tag](const Call& c) {
      EMBER_MPI_CHECK(MPI_Send(buf->data(), count(buf->nbytes()), MPI_BYTE, dst, tag, c.comm));
    });
  }

  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check_rank(src, "recv");
    auto buf = std::make_shared<HostBuffer>(tensor, "recv");
    return enqueue("recv", {tensor}, [buf, src, tag](const Call& c) {
      EMBER_MPI_CHECK(MPI_Recv(buf->data(), count(buf->nbytes()), MPI_BYTE, src, tag, c.comm,
                               MPI_STATUS_IGNORE));
      buf->write_back();
    });
  }

  /// The group of `ranks` (ranks of this group, in the new group's order); only they call it.
  std::shared_ptr<ProcessGroup> subgroup(const std::vector<int>& ranks, int tag) {
    using Made = std::tuple<MPI_Comm, int, int>;
    auto made = std::make_shared<std::promise<Made>>();
    std::future<Made> result = made->get_future();
    runtime_->worker().push([made, ranks, tag, parent = comm_](MpiWorker&) {
      try {
        MPI_Group all, listed;
        MPI_Comm comm;
        EMBER_MPI_CHECK(MPI_Comm_group(parent, &all));
        EMBER_MPI_CHECK(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &listed));
        int rc = MPI_Comm_create_group(parent, listed, tag, &comm);
        MPI_Group_free(&listed);
        MPI_Group_free(&all);
        check_mpi(rc, "MPI_Comm_create_group");
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int rank = 0, size = 0;
        EMBER_MPI_CHECK(MPI_Comm_rank(comm, &rank));
        EMBER_MPI_CHECK(MPI_Comm_size(comm, &size));
        made->set_value({comm, rank, size});
      } catch (...) {
        made->set_exception(std::current_exception());
      }
    });
    std::string listed;
    for (int r : ranks) listed += (listed.empty() ? "" : ", ") + std::to_string(r);
    EMBER_CHECK(result.wait_for(timeout_) == std::future_status::ready, "[new_group] rank ", rank_,
                " timed out after ", timeout_.count(), " ms making the mpi communicator of ranks {",
                listed, "} (did every listed rank call new_group?)");
    auto [comm, rank, size] = result.get();
    return std::make_shared<ProcessGroupMPI>(runtime_, comm, rank, size, timeout_,
                                             /*owns_comm=*/true);
  }

 private:
  // Queues `run` on MPI's thread, after the EMBER_DISTRIBUTED_DEBUG=1 check of `tensors`; its
  // Work fails with an error naming the collective.
  std::shared_ptr<Work> enqueue(const char* op, const std::vector<Tensor>& tensors,
                                std::function<void(const Call&)> run) {
    auto work = std::make_shared<Work>(op, next_sequence_++);
    std::string where = collective_error(op, work->sequence(), "failed: ").what();
    std::string description = debug_checks(op) ? describe_collective(op, tensors) : std::string();
    runtime_->worker().push([work, run = std::move(run), where, description, comm = comm_,
                             rank = rank_, size = size_](MpiWorker& mpi) {
      try {
        if (!description.empty())
          check_same_collective(description, size, [&](const char* mine, char* all) {
            EMBER_MPI_CHECK(MPI_Allgather(mine, static_cast<int>(kDescriptionBytes), MPI_BYTE, all,
                                          static_cast<int>(kDescriptionBytes), MPI_BYTE, comm));
          });
        run(Call{comm, rank, size, mpi});
        work->finish();
      } catch (const std::exception& e) {
        work->finish(std::make_exception_ptr(Error(where + e.what())));
      }
    });
    return work;
  }

  std::shared_ptr<MpiRuntime> runtime_;
  MPI_Comm comm_;
  bool owns_comm_;
  std::chrono::milliseconds timeout_;
  std::atomic<uint64_t> next_sequence_{0};
};

}  // namespace

bool mpi_available() { return true; }

std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds timeout) {
  auto runtime = std::make_shared<MpiRuntime>();
  int rank = runtime->world_rank(), size = runtime->world_size();
  return std::make_shared<ProcessGroupMPI>(std::move(runtime), MPI_COMM_WORLD, rank, size, timeout,
                                           /*owns_comm=*/false);
}

std::shared_ptr<ProcessGroup> make_mpi_subgroup(ProcessGroup& parent, const std::vector<int>& ranks,
                                                int tag) {
  auto* mpi = dynamic_cast<ProcessGroupMPI*>(&parent);
  EMBER_CHECK(mpi != nullptr, "[new_group] expected an mpi parent group, got a ", parent.backend(),
              " one");
  return mpi->subgroup(ranks, tag);
}

}  // namespace ember::distributed
