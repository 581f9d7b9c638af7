// DistributedDataParallel (PyTorch's design and names): parameters and buffers broadcast from
// rank 0 at construction, gradients gathered into buckets in reverse parameter order and each
// bucket all-reduced (averaged) as soon as its last gradient is accumulated, while backward goes
// on; the averaged gradients are written back before backward() returns.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/hook_list.h"
#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember::distributed {

/// A bucket of gradients handed to a communication hook: `buffer` is the flat concatenation of
/// its parameters' gradients (local, not yet averaged).
struct GradBucket {
  int index;
  Tensor buffer;
  std::vector<Tensor> parameters;
  bool is_last;
};

/// A communication hook starts the reduction of a bucket and returns the function that waits
/// for it and gives the averaged flat gradient (PyTorch's register_comm_hook, future -> waiter).
using CommHook = std::function<std::function<Tensor()>(ProcessGroup&, GradBucket&)>;

/// The default: all-reduce of buffer / world_size.
CommHook allreduce_hook();
/// Compresses each bucket to float16 (bfloat16) for the all-reduce, then back to its dtype.
CommHook fp16_compress_hook();
CommHook bf16_compress_hook();

struct DDPOptions {
  double bucket_cap_mb = 25;
  double first_bucket_mb = 1;  // a small first bucket starts communication early
  bool broadcast_buffers = true;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  std::shared_ptr<ProcessGroup> process_group;  // the default group when null
};

class DistributedDataParallel : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, DDPOptions options = {});
  ~DistributedDataParallel() override;
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "DistributedDataParallel"; }
  const std::shared_ptr<nn::Module>& module() const { return module_; }
  /// forward() is pre_forward(), the module's forward, then post_forward(its outputs): callers
  /// whose module takes other arguments (the Python binding) run the module between the two.
  /// pre_forward broadcasts the buffers from rank 0 (broadcast_buffers); post_forward marks
  /// which parameters the outputs' graph reaches (find_unused_parameters).
  void pre_forward();
  void post_forward(const std::vector<Tensor>& outputs);

  /// While the guard lives, backward accumulates gradients locally without communicating; the
  /// first backward after it averages everything accumulated (gradient accumulation).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp) : ddp_(ddp) { ddp_.require_sync_ = false; }
    ~NoSyncGuard() { ddp_.require_sync_ = true; }

   private:
    DistributedDataParallel& ddp_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  void register_comm_hook(CommHook hook) { hook_ = std::move(hook); }
  /// Parameter indices (into module()->parameters()) of each bucket, first bucket first.
  std::vector<std::vector<size_t>> bucket_indices() const;

  /// Time in seconds of the last synchronised backward, for the overlap benchmark: from the
  /// first bucket's launch to the end of backward's node execution (all hooks run), and to the
  /// end of the last bucket's reduction.
  struct Timing {
    double first_launch = 0, backward_end = 0, last_reduce_end = 0;
  };
  const Timing& last_timing() const { return timing_; }

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  struct Bucket {
    std::vector<size_t> params;    // indices into params_
    std::vector<int64_t> offsets;  // element offset of each parameter in buffer
    Tensor buffer;
    size_t pending = 0;
    std::function<Tensor()> waiter;
  };

  void check_same_parameters();
  void broadcast_state();
  void build_buckets();
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  void on_gradient(size_t index);
  void launch_ready_buckets();
  void finalize();

  std::shared_ptr<nn::Module> module_;
  DDPOptions options_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<std::string> names_;
  std::vector<Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // param index -> bucket
  std::vector<size_t> slot_of_;    // param index -> position in its bucket
  std::vector<bool> ready_;
  std::vector<bool> used_;  // reached by the last forward's graph (find_unused_parameters)
  std::vector<RemovableHandle> handles_;
  CommHook hook_;
  size_t next_bucket_ = 0;
  bool require_sync_ = true;
  bool in_backward_ = false;
  Timing timing_;
};

using DDP = DistributedDataParallel;

}  // namespace ember::distributed
