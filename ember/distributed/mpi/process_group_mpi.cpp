// ProcessGroup over MPI. One thread per process owns MPI (it initialises, runs every call in
// queue order, and finalises: MPI_THREAD_SERIALIZED is enough). Reductions use MPI user ops over
// the shared reduction functions, so every dtype (float16 and bfloat16 too) reduces as in Gloo.
#include "ember/distributed/process_group_mpi.h"

// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "ember/core/error.h"
#include "ember/distributed/distributed.h"
#include "ember/distributed/host_buffer.h"
#include "ember/distributed/reduce_functions.h"

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

class ProcessGroupMPI final : public ProcessGroup {
 public:
  explicit ProcessGroupMPI(std::chrono::milliseconds timeout)
      : ProcessGroup(0, 1), timeout_(timeout) {
    std::promise<void> ready;
    std::future<void> started = ready.get_future();
    worker_ = std::thread([this, &ready] {
      try {
        int provided = 0;
        EMBER_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        EMBER_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
        EMBER_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
        ready.set_value();
      } catch (...) {
        ready.set_exception(std::current_exception());
        return;
      }
      work_loop();
      for (auto& [key, op] : ops_) MPI_Op_free(&op);
      for (auto& [size, type] : types_) MPI_Type_free(&type);
      MPI_Finalize();
      std::lock_guard<std::mutex> lock(mutex_);
      exited_ = true;
      exited_cv_.notify_all();
    });
    try {
      started.get();
    } catch (...) {
      worker_.join();
      throw;
    }
  }

  // A collective stuck in MPI (a hung or dead peer) never returns: the thread is then left
  // behind rather than joined, and MPI is not finalised (mpirun ends the job).
  ~ProcessGroupMPI() override {
    std::unique_lock<std::mutex> lock(mutex_);
    stop_ = true;
    queued_.notify_all();
    bool exited = exited_cv_.wait_for(lock, std::chrono::seconds(2), [this] { return exited_; });
    lock.unlock();
    if (exited)
      worker_.join();
    else
      worker_.detach();
  }

  std::string backend() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override {
    check_reduce_op(op, tensor.dtype(), "all_reduce");
    auto buf = std::make_shared<HostBuffer>(tensor, "all_reduce");
    DType dtype = tensor.dtype();
    return enqueue("all_reduce", [this, buf, dtype, op] {
      EMBER_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf->data(), count(buf->numel()), type(dtype),
                                    mpi_op(dtype, op), MPI_COMM_WORLD));
      finish_reduction(*buf, dtype, op);
    });
  }

  std::shared_ptr<Work> broadcast(Tensor tensor, int src) override {
    check_rank(src, "broadcast");
    auto buf = std::make_shared<HostBuffer>(tensor, "broadcast");
    return enqueue("broadcast", [buf, src] {
      EMBER_MPI_CHECK(MPI_Bcast(buf->data(), count(buf->nbytes()), MPI_BYTE, src, MPI_COMM_WORLD));
      buf->write_back();
    });
  }

  std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op) override {
    check_rank(dst, "reduce");
    check_reduce_op(op, tensor.dtype(), "reduce");
    auto buf = std::make_shared<HostBuffer>(tensor, "reduce");
    DType dtype = tensor.dtype();
    return enqueue("reduce", [this, buf, dtype, op, dst] {
      void* data = buf->data();
      EMBER_MPI_CHECK(MPI_Reduce(rank_ == dst ? MPI_IN_PLACE : data, data, count(buf->numel()),
                                 type(dtype), mpi_op(dtype, op), dst, MPI_COMM_WORLD));
      if (rank_ == dst) finish_reduction(*buf, dtype, op);
    });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input) override {
    check_list(outputs, input, "all_gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "all_gather");
    return enqueue("all_gather", [this, in, outputs] {
      std::vector<char> flat(in->nbytes() * size_);
      EMBER_MPI_CHECK(MPI_Allgather(in->data(), count(in->nbytes()), MPI_BYTE, flat.data(),
                                    count(in->nbytes()), MPI_BYTE, MPI_COMM_WORLD));
      unpack_gathered(flat, outputs, in->nbytes(), "all_gather");
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int dst) override {
    check_rank(dst, "gather");
    if (rank_ == dst) check_list(outputs, input, "gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "gather");
    return enqueue("gather", [this, in, outputs, dst] {
      std::vector<char> flat(rank_ == dst ? in->nbytes() * size_ : 0);
      EMBER_MPI_CHECK(MPI_Gather(in->data(), count(in->nbytes()), MPI_BYTE, flat.data(),
                                 count(in->nbytes()), MPI_BYTE, dst, MPI_COMM_WORLD));
      if (rank_ == dst) unpack_gathered(flat, outputs, in->nbytes(), "gather");
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src) override {
    check_rank(src, "scatter");
    if (rank_ == src) check_list(inputs, output, "scatter", "input");
    auto out = std::make_shared<HostBuffer>(output, "scatter");
    return enqueue("scatter", [this, out, inputs, src] {
      std::vector<char> flat(rank_ == src ? out->nbytes() * size_ : 0);
      for (size_t r = 0; r < inputs.size(); ++r)
        std::memcpy(flat.data() + r * out->nbytes(), inputs[r].contiguous().data_ptr(),
                    out->nbytes());
      EMBER_MPI_CHECK(MPI_Scatter(flat.data(), count(out->nbytes()), MPI_BYTE, out->data(),
                                  count(out->nbytes()), MPI_BYTE, src, MPI_COMM_WORLD));
      out->write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                       ReduceOp op) override {
    check_list(inputs, output, "reduce_scatter", "input");
    check_reduce_op(op, output.dtype(), "reduce_scatter");
    auto out = std::make_shared<HostBuffer>(output, "reduce_scatter");
    DType dtype = output.dtype();
    return enqueue("reduce_scatter", [this, out, inputs, dtype, op] {
      size_t n = out->nbytes();
      std::vector<char> flat(n * size_);
      for (int r = 0; r < size_; ++r)
        std::memcpy(flat.data() + r * n, inputs[r].contiguous().data_ptr(), n);
      EMBER_MPI_CHECK(MPI_Reduce_scatter_block(flat.data(), out->data(), count(out->numel()),
                                               type(dtype), mpi_op(dtype, op), MPI_COMM_WORLD));
      finish_reduction(*out, dtype, op);
    });
  }

  std::shared_ptr<Work> all_to_all(Tensor output, Tensor input) override {
    check_like(output, input, "all_to_all", "tensor");
    EMBER_CHECK(input.dim() >= 1 && input.size(0) % size_ == 0,
                "[all_to_all] expected dim 0 to divide into ", size_, " equal chunks, got shape ",
                input.sizes());
    auto in = std::make_shared<HostBuffer>(input, "all_to_all");
    auto out = std::make_shared<HostBuffer>(output, "all_to_all");
    return enqueue("all_to_all", [this, in, out] {
      int chunk = count(in->nbytes() / size_);
      EMBER_MPI_CHECK(
          MPI_Alltoall(in->data(), chunk, MPI_BYTE, out->data(), chunk, MPI_BYTE, MPI_COMM_WORLD));
      out->write_back();
    });
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue("barrier", [] { EMBER_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); });
  }

  // Blocking MPI_Send/MPI_Recv in queue order: a rank's sends and receives happen in the order
  // it calls them (as with blocking MPI).
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check_rank(dst, "send");
    auto buf = std::make_shared<HostBuffer>(tensor, "send");
    return enqueue("send", [buf, dst, tag] {
      EMBER_MPI_CHECK(
          MPI_Send(buf->data(), count(buf->nbytes()), MPI_BYTE, dst, tag, MPI_COMM_WORLD));
    });
  }

  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check_rank(src, "recv");
    auto buf = std::make_shared<HostBuffer>(tensor, "recv");
    return enqueue("recv", [buf, src, tag] {
      EMBER_MPI_CHECK(MPI_Recv(buf->data(), count(buf->nbytes()), MPI_BYTE, src, tag,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      buf->write_back();
    });
  }

 private:
  static int count(size_t n) {
    EMBER_CHECK(n <= static_cast<size_t>(INT32_MAX), "[mpi] a message of ", n,
                " elements is over MPI's int count");
    return static_cast<int>(n);
  }

  void finish_reduction(HostBuffer& buf, DType dtype, ReduceOp op) {
    if (op == ReduceOp::AVG) divide_elements(buf.data(), dtype, buf.numel(), size_);
    buf.write_back();
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
  MPI_Op mpi_op(DType dtype, ReduceOp op) {
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

  std::shared_ptr<Work> enqueue(const char* op, std::function<void()> run) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto work = std::make_shared<Work>(op, next_sequence_++);
    queue_.emplace_back(work, std::move(run));
    queued_.notify_one();
    return work;
  }

  void work_loop() {
    for (;;) {
      std::pair<std::shared_ptr<Work>, std::function<void()>> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queued_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        task.second();
        task.first->finish();
      } catch (const std::exception& e) {
        task.first->finish(std::make_exception_ptr(collective_error(
            task.first->op(), task.first->sequence(), std::string("failed: ") + e.what())));
      }
    }
  }

  std::chrono::milliseconds timeout_;
  std::map<size_t, MPI_Datatype> types_;
  std::map<std::pair<int, int>, MPI_Op> ops_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::pair<std::shared_ptr<Work>, std::function<void()>>> queue_;
  uint64_t next_sequence_ = 0;
  bool stop_ = false;
  bool exited_ = false;
  std::condition_variable exited_cv_;
  std::thread worker_;
};

}  // namespace

bool mpi_available() { return true; }

std::shared_ptr<ProcessGroup> make_mpi_process_group(std::chrono::milliseconds timeout) {
  return std::make_shared<ProcessGroupMPI>(timeout);
}

}  // namespace ember::distributed
