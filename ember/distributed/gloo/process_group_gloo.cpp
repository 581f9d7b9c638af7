// ProcessGroup over Gloo's algorithms. One worker thread per group runs the queued collectives in
// call order, so every rank runs them in the same order and an async collective overlaps with the
// caller's work (DDP's backward). Tags are the collectives' sequence numbers.
#include "ember/distributed/process_group_gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>
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
#include "ember/ops/join.h"

namespace ember::distributed {
namespace {

using Fn = std::function<void(void*, const void*, const void*, size_t)>;

// gloo's Store interface over ember's.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, data);
  }
  std::vector<char> get(const std::string& key) override { return store_->get(key); }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    store_->wait(keys, t);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

// Gloo writes to its sockets without MSG_NOSIGNAL: a write to a peer that just died raises
// SIGPIPE, whose default action ends this process at once, before its error can name the dead
// rank (and then its peers lose the rendezvous store too). As Python does, so PyTorch never sees
// it, SIGPIPE is ignored once a gloo group exists, unless the program chose its own handling.
void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == SIG_DFL)
      std::signal(SIGPIPE, SIG_IGN);
  });
}

Fn reduce_function(DType dtype, ReduceOp op) {
  return dispatch_reduce(dtype, op,
                         []<typename T, typename Op>() -> Fn { return &reduce_elements<T, Op>; });
}

class ProcessGroupGloo final : public ProcessGroup {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, const GlooOptions& options)
      : ProcessGroup(rank, size),
        store_(store),
        timeout_(options.timeout),
        global_ranks_(options.global_ranks) {
    EMBER_CHECK(size >= 1 && rank >= 0 && rank < size,
                "[init_process_group] expected 0 <= rank < world_size, got rank ", rank,
                " and world_size ", size);
    EMBER_CHECK(global_ranks_.empty() || static_cast<int>(global_ranks_.size()) == size,
                "[new_group] expected ", size, " global ranks, got ", global_ranks_.size());
    ignore_sigpipe();
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    try {
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
      context->setTimeout(options.timeout);
      GlooStore gloo_store(store);
      context->connectFullMesh(gloo_store, device);
      context_ = context;
    } catch (const gloo::Exception& e) {
      EMBER_FAIL("[init_process_group] rank ", rank, " of ", size,
                 " could not connect to the other ranks over gloo: ", e.what());
    }
    worker_ = std::thread([this] { work_loop(); });
  }

  ~ProcessGroupGloo() override {
    queue_.close();
    worker_.join();
  }

  std::string backend() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override {
    const char* name = "all_reduce";
    check_reduce_op(op, tensor.dtype(), "all_reduce");
    auto staged = std::make_shared<HostBuffer>(tensor, name);
    DType dtype = tensor.dtype();
    return enqueue(name, {tensor}, [this, staged, dtype, op](uint32_t tag) {
      gloo::AllreduceOptions o(context_);
      set_typed_output(o, staged->data(), dtype, staged->numel());
      o.setReduceFunction(reduce_function(dtype, op));
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allreduce(o);
      if (op == ReduceOp::AVG) divide_elements(staged->data(), dtype, staged->numel(), size_);
      staged->write_back();
    });
  }

  std::shared_ptr<Work> broadcast(Tensor tensor, int src) override {
    check_rank(src, "broadcast");
    auto staged = std::make_shared<HostBuffer>(tensor, "broadcast");
    return enqueue("broadcast", {tensor}, [this, staged, src](uint32_t tag) {
      gloo::BroadcastOptions o(context_);
      o.setOutput(static_cast<char*>(staged->data()), staged->nbytes());
      o.setRoot(src);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::broadcast(o);
      staged->write_back();
    });
  }

  std::shared_ptr<Work> reduce(Tensor tensor, int dst, ReduceOp op) override {
    check_rank(dst, "reduce");
    check_reduce_op(op, tensor.dtype(), "reduce");
    auto staged = std::make_shared<HostBuffer>(tensor, "reduce");
    DType dtype = tensor.dtype();
    return enqueue("reduce", {tensor}, [this, staged, dtype, dst, op](uint32_t tag) {
      gloo::ReduceOptions o(context_);
      set_typed_output(o, staged->data(), dtype, staged->numel());
      o.setRoot(dst);
      o.setReduceFunction(reduce_function(dtype, op));
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::reduce(o);
      if (op == ReduceOp::AVG && rank_ == dst)
        divide_elements(staged->data(), dtype, staged->numel(), size_);
      staged->write_back();
    });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor> outputs, Tensor input) override {
    check_list(outputs, input, "all_gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "all_gather");
    return enqueue("all_gather", {input}, [this, in, outputs](uint32_t tag) {
      HostScratch flat(in->nbytes() * size_);
      gloo::AllgatherOptions o(context_);
      o.setInput(static_cast<char*>(in->data()), in->nbytes());
      o.setOutput(flat.data(), flat.size());
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allgather(o);
      unpack_gathered(flat.data(), outputs, in->nbytes(), "all_gather");
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor> outputs, Tensor input, int dst) override {
    check_rank(dst, "gather");
    if (rank_ == dst) check_list(outputs, input, "gather", "output");
    auto in = std::make_shared<HostBuffer>(input, "gather");
    return enqueue("gather", {input}, [this, in, outputs, dst](uint32_t tag) {
      HostScratch flat(rank_ == dst ? in->nbytes() * size_ : 0);
      gloo::GatherOptions o(context_);
      o.setInput(static_cast<char*>(in->data()), in->nbytes());
      if (rank_ == dst) o.setOutput(flat.data(), flat.size());
      o.setRoot(dst);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::gather(o);
      if (rank_ == dst) unpack_gathered(flat.data(), outputs, in->nbytes(), "gather");
    });
  }

  std::shared_ptr<Work> scatter(Tensor output, std::vector<Tensor> inputs, int src) override {
    check_rank(src, "scatter");
    if (rank_ == src) check_list(inputs, output, "scatter", "input");
    auto out = std::make_shared<HostBuffer>(output, "scatter");
    std::vector<Tensor> contiguous;
    for (const Tensor& t : inputs) contiguous.push_back(t.contiguous());
    return enqueue("scatter", {output}, [this, out, contiguous, src](uint32_t tag) {
      gloo::ScatterOptions o(context_);
      std::vector<char*> ptrs;
      for (const Tensor& t : contiguous) ptrs.push_back(static_cast<char*>(t.data_ptr()));
      if (rank_ == src) o.setInputs(ptrs, out->nbytes());
      o.setOutput(static_cast<char*>(out->data()), out->nbytes());
      o.setRoot(src);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::scatter(o);
      out->write_back();
    });
  }

  std::shared_ptr<Work> all_gather_into_tensor(Tensor output, Tensor input) override {
    const char* name = "all_gather_into_tensor";
    check_flat(output, input, name, "output", "input");
    auto in = std::make_shared<HostBuffer>(input, name);
    auto out = std::make_shared<HostBuffer>(output, name);
    return enqueue(name, {input}, [this, in, out](uint32_t tag) {
      gloo::AllgatherOptions o(context_);
      o.setInput(static_cast<char*>(in->data()), in->nbytes());
      o.setOutput(static_cast<char*>(out->data()), out->nbytes());
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allgather(o);
      out->write_back();
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor output, std::vector<Tensor> inputs,
                                       ReduceOp op) override {
    check_list(inputs, output, "reduce_scatter", "input");
    check_reduce_op(op, output.dtype(), "reduce_scatter");
    // The ring reads the ranks' chunks from one buffer: the list is concatenated first.
    return reduce_scatter_flat("reduce_scatter", output, cat(inputs, 0), op);
  }

  std::shared_ptr<Work> reduce_scatter_tensor(Tensor output, Tensor input, ReduceOp op) override {
    check_flat(input, output, "reduce_scatter_tensor", "input", "output");
    check_reduce_op(op, output.dtype(), "reduce_scatter_tensor");
    return reduce_scatter_flat("reduce_scatter_tensor", output, input, op);
  }

  std::shared_ptr<Work> all_to_all(Tensor output, Tensor input) override {
    check_like(output, input, "all_to_all", "tensor");
    EMBER_CHECK(input.dim() >= 1 && input.size(0) % size_ == 0,
                "[all_to_all] expected dim 0 to divide into ", size_, " equal chunks, got shape ",
                input.sizes());
    auto in = std::make_shared<HostBuffer>(input, "all_to_all");
    auto out = std::make_shared<HostBuffer>(output, "all_to_all");
    return enqueue("all_to_all", {input}, [this, in, out](uint32_t tag) {
      gloo::AlltoallOptions o(context_);
      o.setInput(static_cast<char*>(in->data()), in->nbytes());
      o.setOutput(static_cast<char*>(out->data()), out->nbytes());
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::alltoall(o);
      out->write_back();
    });
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue("barrier", {}, [this](uint32_t tag) {
      gloo::BarrierOptions o(context_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

  // Point-to-point operations skip the queue (a send must not wait behind a recv of the same
  // rank): each posts its buffer at once and a thread waits for it to complete.
  std::shared_ptr<Work> send(Tensor tensor, int dst, int tag) override {
    return point_to_point("send", tensor, dst, tag);
  }
  std::shared_ptr<Work> recv(Tensor tensor, int src, int tag) override {
    return point_to_point("recv", tensor, src, tag);
  }

 private:
  struct Task {
    std::shared_ptr<Work> work;
    std::string description;  // for EMBER_DISTRIBUTED_DEBUG
    std::function<void(uint32_t)> run;
  };

  // A reduction needs gloo to know the element type's size: its function gets element counts.
  template <typename Options>
  static void set_typed_output(Options& o, void* data, DType dtype, size_t numel) {
    dispatch_all(dtype, "collective", [&](auto tag) {
      using T = EMBER_TYPE(tag);
      o.template setOutput<T>(static_cast<T*>(data), numel);
    });
  }

  std::shared_ptr<Work> reduce_scatter_flat(const char* name, Tensor output, Tensor input,
                                            ReduceOp op) {
    auto in = std::make_shared<HostBuffer>(input, name);
    auto out = std::make_shared<HostBuffer>(output, name);
    DType dtype = output.dtype();
    return enqueue(name, {output}, [this, in, out, dtype, op](uint32_t tag) {
      ring_reduce_scatter(static_cast<const char*>(in->data()), static_cast<char*>(out->data()),
                          out->numel(), dtype, op, tag);
      if (op == ReduceOp::AVG) divide_elements(out->data(), dtype, out->numel(), size_);
      out->write_back();
    });
  }

  // Note [Ring reduce-scatter]: Gloo has no reduce-scatter (PyTorch's Gloo group all-reduces the
  // whole input and keeps its part: at least twice the bytes). Here the ranks form a ring; at
  // step s (of size-1) rank r sends its partial sum of chunk r-s-1 to rank r+1 and adds its own
  // chunk r-s-2 to the partial sum arriving from rank r-1. Chunk c starts at rank c+1 and reaches
  // rank c after size-1 hops, having gathered every rank's part: each rank sends (size-1)/size
  // of the input's bytes, the least any reduce-scatter can. Two partial buffers alternate, so
  // one is written while the other is still being sent; `input` is only read.
  void ring_reduce_scatter(const char* input, char* output, size_t count, DType dtype, ReduceOp op,
                           uint32_t tag) {
    size_t bytes = count * itemsize(dtype);
    auto chunk = [&](int c) { return input + static_cast<size_t>((c % size_ + size_) % size_) * bytes; };
    if (size_ == 1) {
      std::memcpy(output, input, bytes);
      return;
    }
    Fn reduce = reduce_function(dtype, op);
    // Partial sums are kept only between steps: with 2 ranks the one step writes the output.
    HostScratch scratch((size_ > 2 ? 3 : 1) * bytes);
    char* incoming = scratch.data();
    char* partial[2] = {incoming + bytes, incoming + 2 * bytes};
    auto receiver = context_->createUnboundBuffer(incoming, bytes);
    int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
    const char* sending = chunk(rank_ - 1);
    for (int step = 0; step < size_ - 1; ++step) {
      auto sender = context_->createUnboundBuffer(const_cast<char*>(sending), bytes);
      uint64_t slot = p2p_slot(kRingSlotKind, static_cast<uint64_t>(step), tag);
      receiver->recv(left, slot);
      sender->send(right, slot);
      // Gloo throws an IoException when either times out (work_loop names the dead peer).
      receiver->waitRecv(nullptr, timeout_);
      sender->waitSend(nullptr, timeout_);
      char* sum = step == size_ - 2 ? output : partial[step % 2];
      reduce(sum, chunk(rank_ - step - 2), incoming, count);
      sending = sum;
    }
  }

  std::shared_ptr<Work> enqueue(const char* op, const std::vector<Tensor>& tensors,
                                std::function<void(uint32_t)> run) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t sequence = next_sequence_++;
    auto work = std::make_shared<Work>(op, sequence);
    std::string description = debug_checks(op) ? describe_collective(op, tensors) : std::string();
    // Pushed under mutex_, so that the queue's order is the sequence numbers' order.
    queue_.push({work, std::move(description), std::move(run)});
    return work;
  }

  void work_loop() {
    while (std::optional<Task> next = queue_.pop()) {
      Task& task = *next;
      uint32_t tag = static_cast<uint32_t>(task.work->sequence() * 2);
      try {
        if (!task.description.empty()) debug_check(task.description, tag + 1);
        task.run(tag);
        task.work->finish();
      } catch (const gloo::IoException& e) {
        task.work->finish(std::make_exception_ptr(
            wrap_error(task.work->op(), task.work->sequence(), e.what(), /*io=*/true)));
      } catch (const std::exception& e) {
        task.work->finish(std::make_exception_ptr(
            wrap_error(task.work->op(), task.work->sequence(), e.what(), /*io=*/false)));
      }
    }
  }

  // io: a transport error, where a lost peer is the likely cause.
  Error wrap_error(const std::string& op, uint64_t sequence, const std::string& what,
                   bool io) const {
    bool timed_out =
        what.find("Timed out") != std::string::npos || what.find("timed out") != std::string::npos;
    // A peer whose host vanished sends nothing more: the collective times out, and the store's
    // server has meanwhile seen that rank's connection fail (Note [Store connections notice a
    // vanished host]), or the store itself is gone; either names the rank.
    if (timed_out)
      return collective_error(
          op, sequence,
          timed_out_text() + ": " +
              describe_dead_ranks(*store_, std::chrono::milliseconds(0), global_ranks_) + what);
    std::string dead =
        io ? describe_dead_ranks(*store_, std::chrono::seconds(2), global_ranks_) : std::string();
    return collective_error(op, sequence, "failed: " + dead + what);
  }

  // EMBER_DISTRIBUTED_DEBUG=1, over a gloo all-gather with its own tag.
  void debug_check(const std::string& description, uint32_t tag) {
    check_same_collective(description, size_, [&](const char* mine, char* all) {
      gloo::AllgatherOptions o(context_);
      o.setInput(const_cast<char*>(mine), kDescriptionBytes);
      o.setOutput(all, kDescriptionBytes * size_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  // Gloo matches a send to a recv by (peer, slot), in posting order. Slots: 1 in the top byte
  // for data; with EMBER_DISTRIBUTED_DEBUG=1 the data waits for the check, so the pairs are told
  // apart by their count on the (peer, direction, tag) channel instead of by posting order: 2 for
  // data, 3 for a description going from sender to receiver, 4 for the receiver's going back.
  static constexpr uint64_t kRingSlotKind = 16;  // above Gloo's own slot prefixes (1 to 8)
  static uint64_t p2p_slot(uint64_t kind, uint64_t count, int tag) {
    return (kind << 56) | ((count & 0xffffff) << 32) | static_cast<uint32_t>(tag);
  }

  // EMBER_DISTRIBUTED_DEBUG=1: one side's half of the trade of descriptions (check_matching_p2p),
  // posted when send or recv is called, so no rank waits for its peer's thread to post.
  struct P2PCheck {
    std::vector<char> mine, theirs;
    std::unique_ptr<gloo::transport::UnboundBuffer> out, in;
  };

  std::shared_ptr<P2PCheck> post_p2p_check(bool is_send, int peer, uint64_t count, int tag,
                                           const std::string& description) {
    auto check = std::make_shared<P2PCheck>();
    check->mine.assign(kDescriptionBytes, 0);
    check->theirs.assign(kDescriptionBytes, 0);
    std::memcpy(check->mine.data(), description.data(),
                std::min(kDescriptionBytes - 1, description.size()));
    check->out = context_->createUnboundBuffer(check->mine.data(), kDescriptionBytes);
    check->in = context_->createUnboundBuffer(check->theirs.data(), kDescriptionBytes);
    check->out->send(peer, p2p_slot(is_send ? 3 : 4, count, tag));
    check->in->recv(peer, p2p_slot(is_send ? 4 : 3, count, tag));
    return check;
  }

  std::shared_ptr<Work> point_to_point(const char* op, Tensor tensor, int peer, int tag) {
    check_rank(peer, op);
    EMBER_CHECK(peer != rank_, "[", op, "] a rank cannot ", op, " to itself (rank ", rank_, ")");
    bool is_send = std::strcmp(op, "send") == 0;
    auto staged = std::make_shared<HostBuffer>(tensor, op);
    auto buffer = std::shared_ptr<gloo::transport::UnboundBuffer>(
        context_->createUnboundBuffer(staged->data(), staged->nbytes()));
    std::shared_ptr<P2PCheck> check;
    uint64_t slot = p2p_slot(1, 0, tag);
    if (debug_enabled()) {
      uint64_t count;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        count = p2p_counts_[{peer, is_send, tag}]++;
      }
      slot = p2p_slot(2, count, tag);
      check = post_p2p_check(is_send, peer, count, tag, describe_tensor(tensor));
    }
    auto post = [buffer, is_send, peer, slot] {
      if (is_send)
        buffer->send(peer, slot);
      else
        buffer->recv(peer, slot);
    };
    if (!check) post();
    auto work = std::make_shared<Work>(op, 0);
    std::chrono::milliseconds timeout = timeout_;
    std::thread([work, buffer, staged, check, post, is_send, timeout, op, peer, tag, r = rank_] {
      auto timed_out = [&] {
        return Error(detail::str_cat("[", op, "] rank ", r, " timed out after ", timeout.count(),
                                     " ms waiting for rank ", peer));
      };
      try {
        int from = peer;
        if (check) {
          if (!check->out->waitSend(&from, timeout) || !check->in->waitRecv(&from, timeout))
            throw timed_out();
          check->theirs.back() = '\0';
          check_matching_p2p(is_send, r, peer, tag, check->mine.data(), check->theirs.data());
          post();
        }
        bool ok = is_send ? buffer->waitSend(&from, timeout) : buffer->waitRecv(&from, timeout);
        if (!ok) throw timed_out();
        staged->write_back();
        work->finish();
      } catch (const std::exception& e) {
        work->finish(std::make_exception_ptr(Error(detail::str_cat(
            "[", op, "] between rank ", r, " and rank ", peer, " (gloo) failed: ", e.what()))));
      }
    }).detach();
    return work;
  }

  std::shared_ptr<Store> store_;
  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  std::vector<int> global_ranks_;  // empty for the default group
  std::mutex mutex_;               // guards what follows
  uint64_t next_sequence_ = 0;
  // EMBER_DISTRIBUTED_DEBUG=1: sends and recvs so far per (peer, is_send, tag) (p2p_slot).
  std::map<std::tuple<int, bool, int>, uint64_t> p2p_counts_;
  TaskQueue<Task> queue_;
  std::thread worker_;
};

}  // namespace

bool gloo_available() { return true; }

std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store> store, int rank,
                                                      int size, const GlooOptions& options) {
  return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size, options);
}

}  // namespace ember::distributed
