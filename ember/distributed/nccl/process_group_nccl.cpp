// ProcessGroup over NCCL. Note [NCCL stream ordering]: every collective (1) records an event on
// the caller's current stream and makes the group's stream wait for it, so NCCL reads finished
// data; (2) runs on the group's stream; (3) marks the tensors used on that stream (the caching
// allocator keeps their memory until it is done); (4) makes the caller's stream wait for the
// group's stream, so later work sees the result. The host never blocks: Work::wait() returns at
// once (Work::synchronize() waits on the host).
//
// Note [NCCL watchdog]: NCCL never times out and a dead peer can leave its kernels spinning
// forever, so a thread per group (as PyTorch's ProcessGroupNCCL) watches the outstanding
// collectives' end events. A collective done on the GPU completes its Work. One still running
// after the group's timeout, an asynchronous error NCCL reports (ncclCommGetAsyncError: a peer's
// connection lost), or a rank the rendezvous store knows died makes the watchdog abort the
// communicator (ncclCommAbort ends the spinning kernels) and fail every outstanding Work with an
// ember::Error naming the operation, its sequence number, the rank and the cause. The group can
// then run no more collectives: each later call throws that first error.
//
// Note [NCCL non-blocking communicator]: ncclCommInitRank blocks until every rank has joined, for
// ever if one never does, and a blocking communicator can also leave a thread stuck inside a
// collective call (NCCL connects to a peer lazily, at its first use). So the communicator is made
// non-blocking (config.blocking = 0): no call blocks, ncclCommAbort may be called at any point,
// and a call that returns ncclInProgress leaves the communicator busy until
// ncclCommGetAsyncError says otherwise. Start-up polls it under a StartupWatch (the group's
// timeout; a dead rank the store knows of at once; on failure the ranks that never signed in are
// named), and a launch polls it until the call is done or the watchdog failed the group.
#include "ember/distributed/process_group_nccl.h"

#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/stream.h"
#include "ember/core/error.h"
#include "ember/distributed/startup_watch.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"

namespace ember::distributed {
namespace {

void check_nccl(ncclResult_t rc, const char* call) {
  EMBER_CHECK(rc == ncclSuccess, "[nccl] ", call, " failed: ", ncclGetErrorString(rc));
}
#define EMBER_NCCL_CHECK(call) check_nccl((call), #call)
// Inside the process group, for a call on its communicator (see check_comm).
#define EMBER_NCCL_COMM_CHECK(call) check_comm((call), #call)

// bool reduces as bytes: SUM is "or" (max), PRODUCT is "and" (min).
ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::Bool:
    case DType::UInt8:
      return ncclUint8;
    case DType::Int8:
      return ncclInt8;
    case DType::Int32:
      return ncclInt32;
    case DType::Int16:  // NCCL has no 16-bit integers (PyTorch's NCCL group refuses them too)
      break;
    case DType::Int64:
      return ncclInt64;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
  }
  EMBER_FAIL("[nccl] unsupported dtype ", dtype);
}

ncclRedOp_t nccl_op(ReduceOp op, DType dtype) {
  bool boolean = dtype == DType::Bool;
  switch (op) {
    case ReduceOp::SUM:
      return boolean ? ncclMax : ncclSum;
    case ReduceOp::AVG:
      return ncclAvg;
    case ReduceOp::PRODUCT:
      return boolean ? ncclMin : ncclProd;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::MAX:
      return ncclMax;
  }
  return ncclSum;
}

class ProcessGroupNCCL final : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size,
                   std::chrono::milliseconds timeout, std::vector<int> global_ranks)
      : ProcessGroup(rank, size),
        store_(store),
        timeout_(timeout),
        global_ranks_(std::move(global_ranks)),
        device_(cuda::current_device()),
        stream_(cuda::get_stream_from_pool(/*high_priority=*/false, device_)) {
    StartupWatch watch(store, "the NCCL communicator", rank, size, timeout, global_ranks_);
    Bytes shared = watch.share_from_rank0([] {
      ncclUniqueId id;
      EMBER_NCCL_CHECK(ncclGetUniqueId(&id));
      return Bytes(reinterpret_cast<char*>(&id), reinterpret_cast<char*>(&id) + sizeof(id));
    });
    ncclUniqueId id;
    EMBER_ASSERT(shared.size() == sizeof(id), "NCCL unique id of ", shared.size(), " bytes");
    std::memcpy(&id, shared.data(), sizeof(id));
    start_communicator(watch, id);
    watchdog_ = std::thread([this] { watchdog_loop(); });
  }

  // Destroying a communicator can block forever when a peer is gone: abort never does. Works
  // still outstanding fail rather than leave a waiting thread hanging.
  ~ProcessGroupNCCL() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    watchdog_cv_.notify_all();
    watchdog_.join();
    std::deque<std::shared_ptr<Pending>> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        complete_finished();
      } catch (const std::exception&) {
        // A broken device: what is left fails below.
      }
      left.swap(pending_);
    }
    for (const auto& p : left)
      p->work->finish(std::make_exception_ptr(collective_error(
          p->work->op(), p->work->sequence(),
          "failed: the process group was destroyed before the collective completed")));
    abort_comm();
  }

  std::string backend() const override { return "nccl"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override {
    check(tensor, "all_reduce");
    return run("all_reduce", {tensor}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(
          ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                        nccl_type(tensor.dtype()), nccl_op(op, tensor.dtype()), comm_, s));
    });
  }

  std::shared_ptr<Work> broadcast(Tensor tensor, int src) override {
    check(tensor, "broadcast");
    return run("broadcast", {tensor}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.nbytes(),
                                          ncclUint8, src, comm_, s));
    });
  }

  std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op) override {
    check(tensor, "reduce");
    return run("reduce", {tensor}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(
          ncclReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                     nccl_type(tensor.dtype()), nccl_op(op, tensor.dtype()), dst, comm_, s));
    });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input) override {
    check(input, "all_gather");
    check_list(outputs, input, "all_gather");
    std::vector<Tensor> all = outputs;
    all.push_back(input);
    return run("all_gather", all, [&](cudaStream_t s) {
      EMBER_NCCL_CHECK(ncclGroupStart());
      for (int r = 0; r < size_; ++r) {
        EMBER_NCCL_CHECK(ncclSend(input.data_ptr(), input.nbytes(), ncclUint8, r, comm_, s));
        EMBER_NCCL_CHECK(ncclRecv(outputs[r].data_ptr(), input.nbytes(), ncclUint8, r, comm_, s));
      }
      EMBER_NCCL_COMM_CHECK(ncclGroupEnd());
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int dst) override {
    check(input, "gather");
    if (rank_ == dst) check_list(outputs, input, "gather");
    std::vector<Tensor> all = outputs;
    all.push_back(input);
    return run("gather", all, [&](cudaStream_t s) {
      EMBER_NCCL_CHECK(ncclGroupStart());
      EMBER_NCCL_CHECK(ncclSend(input.data_ptr(), input.nbytes(), ncclUint8, dst, comm_, s));
      if (rank_ == dst)
        for (int r = 0; r < size_; ++r)
          EMBER_NCCL_CHECK(ncclRecv(outputs[r].data_ptr(), input.nbytes(), ncclUint8, r, comm_, s));
      EMBER_NCCL_COMM_CHECK(ncclGroupEnd());
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src) override {
    check(output, "scatter");
    if (rank_ == src) check_list(inputs, output, "scatter");
    std::vector<Tensor> all = inputs;
    all.push_back(output);
    return run("scatter", all, [&](cudaStream_t s) {
      EMBER_NCCL_CHECK(ncclGroupStart());
      if (rank_ == src)
        for (int r = 0; r < size_; ++r)
          EMBER_NCCL_CHECK(ncclSend(inputs[r].data_ptr(), output.nbytes(), ncclUint8, r, comm_, s));
      EMBER_NCCL_CHECK(ncclRecv(output.data_ptr(), output.nbytes(), ncclUint8, src, comm_, s));
      EMBER_NCCL_COMM_CHECK(ncclGroupEnd());
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                       ReduceOp op) override {
    check(output, "reduce_scatter");
    check_list(inputs, output, "reduce_scatter");
    Tensor flat = cat(inputs, 0);  // on the caller's stream, before the event
    return run("reduce_scatter", {output, flat}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(
          ncclReduceScatter(flat.data_ptr(), output.data_ptr(), static_cast<size_t>(output.numel()),
                            nccl_type(output.dtype()), nccl_op(op, output.dtype()), comm_, s));
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input) override {
    check(input, "all_gather_into_tensor");
    check(output, "all_gather_into_tensor");
    check_flat(output, input, "all_gather_into_tensor", "output", "input");
    return run("all_gather_into_tensor", {output, input}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(ncclAllGather(input.data_ptr(), output.data_ptr(), input.nbytes(),
                                          ncclUint8, comm_, s));
    });
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input, ReduceOp op) override {
    check(input, "reduce_scatter_tensor");
    check(output, "reduce_scatter_tensor");
    check_flat(input, output, "reduce_scatter_tensor", "input", "output");
    return run("reduce_scatter_tensor", {output, input}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(
          ncclReduceScatter(input.data_ptr(), output.data_ptr(), static_cast<size_t>(output.numel()),
                            nccl_type(output.dtype()), nccl_op(op, output.dtype()), comm_, s));
    });
  }

  std::shared_ptr<Work> all_to_all(Tensor output, Tensor input) override {
    check(input, "all_to_all");
    check(output, "all_to_all");
    EMBER_CHECK(input.sizes() == output.sizes() && input.dim() >= 1 && input.size(0) % size_ == 0,
                "[all_to_all] expected equal shapes whose dim 0 divides into ", size_,
                " chunks, got ", input.sizes(), " and ", output.sizes());
    return run("all_to_all", {input, output}, [&](cudaStream_t s) {
      size_t chunk = input.nbytes() / static_cast<size_t>(size_);
      char* in = static_cast<char*>(input.data_ptr());
      char* out = static_cast<char*>(output.data_ptr());
      EMBER_NCCL_CHECK(ncclGroupStart());
      for (int r = 0; r < size_; ++r) {
        EMBER_NCCL_CHECK(ncclSend(in + r * chunk, chunk, ncclUint8, r, comm_, s));
        EMBER_NCCL_CHECK(ncclRecv(out + r * chunk, chunk, ncclUint8, r, comm_, s));
      }
      EMBER_NCCL_COMM_CHECK(ncclGroupEnd());
    });
  }

  // An all-reduce of one element, waited for on the host (a barrier must block); the watchdog
  // completes or fails it.
  std::shared_ptr<Work> barrier() override {
    Tensor one = ones({1}, TensorOptions(Device(DeviceType::CUDA, device_)));
    std::shared_ptr<Work> work = all_reduce(one, ReduceOp::SUM);
    work->synchronize();
    return work;
  }

  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    check(tensor, "send");
    return run("send", {tensor}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(ncclSend(tensor.data_ptr(), tensor.nbytes(), ncclUint8, dst, comm_, s));
    });
  }

  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    check(tensor, "recv");
    return run("recv", {tensor}, [&](cudaStream_t s) {
      EMBER_NCCL_COMM_CHECK(ncclRecv(tensor.data_ptr(), tensor.nbytes(), ncclUint8, src, comm_, s));
    });
  }

 private:
  // Note [NCCL non-blocking communicator]. On failure the communicator is aborted here: the
  // constructor throws, so the destructor never runs.
  void start_communicator(StartupWatch& watch, const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    auto abandon = [this] {
      if (comm_) ncclCommAbort(comm_);
      comm_ = nullptr;
    };
    ncclResult_t rc = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      abandon();  // NCCL leaves comm_ null on an early failure; abort accepts null
      check_nccl(rc, "ncclCommInitRankConfig");
    }
    watch.wait_until(
        [this] {
          ncclResult_t state = ncclSuccess;
          check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
          if (state == ncclInProgress) return false;
          check_nccl(state, "ncclCommInitRankConfig");
          return true;
        },
        abandon, kStartupPollPeriod);
  }

  // A call on the communicator outside ncclGroupStart/End (or ncclGroupEnd itself): one that
  // returns ncclInProgress is polled to its end (Note [NCCL non-blocking communicator]); the
  // watchdog bounds it, and once it failed the group the poll stops with the group's error, so
  // the watchdog's abort never overlaps a call.
  void check_comm(ncclResult_t rc, const char* call) {
    while (rc == ncclInProgress) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        throw_if_failed(call);
      }
      std::this_thread::sleep_for(kLaunchPollPeriod);
      check_nccl(ncclCommGetAsyncError(comm_, &rc), "ncclCommGetAsyncError");
    }
    check_nccl(rc, call);
  }

  void check(const Tensor& t, const char* op) const {
    EMBER_CHECK(t.defined() && t.is_cuda() && t.get_device() == device_, "[", op,
                "] the nccl backend takes tensors on this rank's GPU (cuda:", device_, "), got ",
                t.defined() ? t.device().str() : std::string("an undefined tensor"),
                " (use the gloo backend for CPU tensors)");
    EMBER_CHECK(t.is_contiguous(), "[", op, "] the nccl backend needs contiguous tensors");
  }
  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* op) const {
    ProcessGroup::check_list(list, like, op, "tensor");
    for (const Tensor& t : list) check(t, op);
  }

  struct Pending {
    std::shared_ptr<Work> work;
    cuda::Event done;  // recorded on stream_ after the launch; requires mutex_ held
    bool launched = false;
    std::chrono::steady_clock::time_point started;
  };

  // Note [NCCL stream ordering], Note [NCCL watchdog].
  template <typename F>
  std::shared_ptr<Work> run(const char* op, const std::vector<Tensor>& tensors, F&& launch) {
    if (debug_checks(op)) debug_check(op, tensors);
    return launch_watched(op, tensors, std::forward<F>(launch), /*counted=*/true);
  }

  // EMBER_DISTRIBUTED_DEBUG=1: the descriptions meet in an all-gather of a small device buffer,
  // waited for on the host; the watchdog bounds the wait. It takes the number of the collective
  // it checks, so sequence numbers are the same with and without the check.
  void debug_check(const char* op, const std::vector<Tensor>& tensors) {
    check_same_collective(
        describe_collective(op, tensors), size_, [&](const char* mine, char* all) {
          Device gpu(DeviceType::CUDA, device_);
          Tensor in = zeros({static_cast<int64_t>(kDescriptionBytes)}, TensorOptions(kUInt8));
          std::memcpy(in.data_ptr(), mine, kDescriptionBytes);
          in = in.to(gpu);
          Tensor out = zeros({static_cast<int64_t>(kDescriptionBytes) * size_},
                             TensorOptions(kUInt8).with_device(gpu));
          std::string name = std::string(op) + " (its EMBER_DISTRIBUTED_DEBUG check)";
          std::shared_ptr<Work> work = launch_watched(
              name.c_str(), {in, out},
              [&](cudaStream_t s) {
                EMBER_NCCL_COMM_CHECK(ncclAllGather(in.data_ptr(), out.data_ptr(),
                                                    kDescriptionBytes, ncclUint8, comm_, s));
              },
              /*counted=*/false);
          work->synchronize();
          Tensor host = out.cpu();
          std::memcpy(all, host.data_ptr(), kDescriptionBytes * size_);
        });
  }

  // Launches on the group's stream and hands the collective to the watchdog, which watches it
  // from before the launch: a launch that does not finish (NCCL connecting to a dead peer keeps
  // it ncclInProgress) fails with the group. An uncounted launch takes the number of the next
  // counted one.
  template <typename F>
  std::shared_ptr<Work> launch_watched(const char* op, const std::vector<Tensor>& tensors,
                                       F&& launch, bool counted) {
    // The watchdog holds comm_mutex_ while it aborts the communicator, and ncclCommAbort waits
    // for the work queued before it (a collective behind a stalled stream: until that stream
    // moves). A caller must not wait for the abort: the group's failure is its answer.
    std::unique_lock<std::timed_mutex> comm_lock(comm_mutex_, std::defer_lock);
    while (!comm_lock.try_lock_for(kWatchdogPeriod)) {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed(op);
    }
    auto pending = std::make_shared<Pending>();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed(op);
      uint64_t sequence = counted ? next_sequence_++ : next_sequence_;
      pending->work = std::make_shared<Work>(op, sequence, /*stream_ordered=*/true);
      pending->started = std::chrono::steady_clock::now();
      pending_.push_back(pending);
    }
    try {
      cuda::Stream caller = cuda::current_stream(device_);
      cuda::Event inputs_ready;
      inputs_ready.record(caller);
      inputs_ready.wait(stream_);
      launch(reinterpret_cast<cudaStream_t>(stream_.handle()));
      for (const Tensor& t : tensors)
        if (t.defined()) t.record_stream(stream_.handle());
      std::lock_guard<std::mutex> lock(mutex_);
      pending->done.record(stream_);
      pending->done.wait(caller);
      pending->launched = true;
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      throw_if_failed(op);  // the watchdog aborted the launch: its error says why
      std::erase(pending_, pending);
      throw;
    }
    return pending->work;
  }

  // Requires mutex_ held.
  void throw_if_failed(const char* op) const {
    EMBER_CHECK(failure_.empty(), "[", op, "] the nccl process group (rank ", rank_, " of ", size_,
                ") was aborted by an earlier failure and can run no more collectives: ", failure_);
  }

  // Completes the Works whose collectives are done on the GPU (in stream order, so the oldest
  // first). Requires mutex_ held.
  void complete_finished() {
    while (!pending_.empty() && pending_.front()->launched && pending_.front()->done.query()) {
      pending_.front()->work->finish();
      pending_.pop_front();
    }
  }

  void watchdog_loop() {
    try {
      cuda::set_device(device_);
    } catch (const std::exception&) {
      // Then the first event query fails, and says why.
    }
    auto last_dead_check = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!watchdog_cv_.wait_for(lock, kWatchdogPeriod, [this] { return stop_; })) {
      if (!failure_.empty()) continue;
      std::string why;
      std::shared_ptr<Pending> oldest;
      try {
        complete_finished();
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm_, &async);
        if (pending_.empty() && async == ncclSuccess) continue;
        if (!pending_.empty()) oldest = pending_.front();
        auto now = std::chrono::steady_clock::now();
        auto age = oldest ? now - oldest->started : std::chrono::nanoseconds(0);
        if (async != ncclSuccess && async != ncclInProgress) {
          lock.unlock();
          why = detail::str_cat(
              "failed: ", describe_dead_ranks(*store_, std::chrono::seconds(1), global_ranks_),
              "NCCL reported an asynchronous error: ", ncclGetErrorString(async));
          lock.lock();
        } else if (age > timeout_) {
          why = timed_out_text();
        } else if (age > kDeadRankCheckAfter && now - last_dead_check > kDeadRankCheckAfter &&
                   store_->tracks_ranks()) {
          // A peer that died mid-collective may leave NCCL waiting for ever without an error.
          last_dead_check = now;
          lock.unlock();
          std::string dead =
              describe_dead_ranks(*store_, std::chrono::milliseconds(0), global_ranks_);
          lock.lock();
          if (!dead.empty()) why = "failed: " + dead + "the communicator was aborted";
        }
      } catch (const std::exception& e) {
        why = std::string("failed: the watchdog could not check the collective: ") + e.what();
      }
      if (why.empty() || !failure_.empty()) continue;
      if (!oldest && !pending_.empty()) oldest = pending_.front();
      std::string first =
          oldest ? collective_error(oldest->work->op(), oldest->work->sequence(), why).what()
                 : collective_error("nccl", next_sequence_, why).what();
      fail_all(first, oldest, lock);
    }
  }

  // Records the group's failure, fails every outstanding Work (the oldest with `first`, the
  // later ones as not run because of it) and aborts the communicator. Requires `lock` held.
  void fail_all(const std::string& first, const std::shared_ptr<Pending>& oldest,
                std::unique_lock<std::mutex>& lock) {
    failure_ = first;
    std::deque<std::shared_ptr<Pending>> failed;
    failed.swap(pending_);
    lock.unlock();
    for (const auto& p : failed) {
      if (p == oldest) {
        p->work->finish(std::make_exception_ptr(Error(first)));
      } else {
        p->work->finish(std::make_exception_ptr(collective_error(
            p->work->op(), p->work->sequence(), "failed: the communicator was aborted: " + first)));
      }
    }
    abort_comm();
    lock.lock();
  }

  // NCCL's abort must not overlap another call on the communicator. A launch never blocks inside
  // NCCL (Note [NCCL non-blocking communicator]) and stops polling once the group failed, so the
  // launch lock comes within a poll period; should it not within a second, the abort goes ahead
  // rather than hang.
  void abort_comm() {
    std::unique_lock<std::timed_mutex> comm_lock(comm_mutex_, std::defer_lock);
    bool locked = comm_lock.try_lock_for(std::chrono::seconds(1));
    (void)locked;
    if (!comm_ || aborted_.exchange(true)) return;
    ncclCommAbort(comm_);
  }

  static constexpr std::chrono::milliseconds kWatchdogPeriod{20};
  // How often start-up and a launch that returned ncclInProgress ask NCCL whether it is done.
  static constexpr std::chrono::milliseconds kStartupPollPeriod{5};
  static constexpr std::chrono::microseconds kLaunchPollPeriod{100};
  // How long a collective may run before the watchdog asks the store about dead ranks, and how
  // often it asks again.
  static constexpr std::chrono::milliseconds kDeadRankCheckAfter{1000};

  std::shared_ptr<Store> store_;
  std::chrono::milliseconds timeout_;
  std::vector<int> global_ranks_;  // empty for the default group
  int device_;
  cuda::Stream stream_;
  ncclComm_t comm_ = nullptr;
  std::timed_mutex comm_mutex_;  // one launch at a time; the abort waits for it (abort_comm)
  std::atomic<bool> aborted_{false};
  std::mutex mutex_;  // guards what follows
  std::condition_variable watchdog_cv_;
  std::deque<std::shared_ptr<Pending>> pending_;  // launch order
  std::string failure_;                           // the first failure; empty while healthy
  uint64_t next_sequence_ = 0;
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace

bool nccl_available() { return true; }

std::shared_ptr<ProcessGroup> make_nccl_process_group(std::shared_ptr<Store> store, int rank,
                                                      int size, std::chrono::milliseconds timeout,
                                                      const std::vector<int>& global_ranks) {
  return std::make_shared<ProcessGroupNCCL>(std::move(store), rank, size, timeout, global_ranks);
}

}  // namespace ember::distributed
