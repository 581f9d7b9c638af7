// FullyShardedDataParallel (PyTorch's FSDP, its names and strategies): a module whose parameters,
// gradients and optimizer state are split across the ranks, each rank holding 1/N of them and
// gathering a unit's parameters only while that unit computes (flat_param.h). Wrap the parts of
// a model first (each transformer block), then the whole: each wrapper is one unit, and the
// outer one takes the parameters no inner one holds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/flat_param.h"
#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember::distributed {

struct FsdpOptions {
  ShardingStrategy sharding_strategy = ShardingStrategy::FULL_SHARD;
  MixedPrecision mixed_precision;
  /// Rank 0's parameters (and buffers) are broadcast before sharding, so ranks need not have
  /// initialised them alike.
  bool sync_module_states = false;
  std::shared_ptr<ProcessGroup> process_group;  // the default group when null
  /// HYBRID_SHARD: how many consecutive ranks share shards (one machine's); LOCAL_WORLD_SIZE by
  /// default, as torchrun and `ember launch` set it.
  int ranks_per_shard_group = 0;
  /// Shard each parameter along dim 0 in its own slot (FSDP2's layout, FlatParamOptions).
  bool per_parameter = false;
  /// Start gathering the next unit's parameters when a unit's forward starts (Note [Forward
  /// prefetch]); PyTorch's forward_prefetch, off by default as there.
  bool forward_prefetch = false;
};

/// The groups a strategy shards and replicates over (HYBRID_SHARD makes them once per process).
FlatParamOptions flat_param_options(const FsdpOptions& options);

class FullyShardedDataParallel : public nn::Module {
 public:
  /// Shards `module`'s parameters outside the FullyShardedDataParallel modules below it.
  explicit FullyShardedDataParallel(std::shared_ptr<nn::Module> module, FsdpOptions options = {});
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "FullyShardedDataParallel"; }
  std::string extra_repr() const override;
  const std::shared_ptr<nn::Module>& module() const { return module_; }
  FlatParamHandle& handle() { return *handle_; }

  /// While the guard lives, this unit and those below it keep full gradients instead of
  /// reducing them (gradient accumulation); the next backward reduces everything kept.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(FullyShardedDataParallel& root);
    ~NoSyncGuard();

   private:
    std::vector<FullyShardedDataParallel*> units_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  /// The units at and below this one (this first).
  std::vector<FullyShardedDataParallel*> units();
  /// The model's parameters and buffers under their original names (wrappers' names left out),
  /// full, gathered from every rank (state_dict_type FULL_STATE_DICT).
  nn::NamedTensors full_state_dict();
  void load_full_state_dict(const nn::NamedTensors& state);
  /// Clips the gradients of every shard below this unit so that their norm over all ranks is
  /// at most max_norm; returns that total norm (FSDP.clip_grad_norm_).
  double clip_grad_norm_(double max_norm, double norm_type = 2.0);

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  std::shared_ptr<nn::Module> module_;
  FsdpOptions options_;
  std::unique_ptr<FlatParamHandle> handle_;
};

using FSDP = FullyShardedDataParallel;

/// FSDP2's fully_shard: shards `module`'s parameters in place, each along dim 0 in its own slot
/// (those of modules below it already fully_shard-ed stay theirs), and hooks its calls (Note
/// [Module calls] in nn/module.cpp): the parameters are gathered before each forward and
/// resharded after it, no wrapper in between. Shard the parts (each block) first, then the whole,
/// and run the model through operator() or call(). The module's hooks own the returned handle
/// (summon_full, the state layout), which lives as long as the module.
FlatParamHandle& fully_shard(nn::Module& module, FsdpOptions options = {});
/// clip_grad_norm_ over the shards of `module` and the fully_shard-ed modules below it: the
/// gradients' norm over every rank, each gradient scaled so that it is at most max_norm; returns
/// the norm (PyTorch's clip_grad_norm_ on FSDP2's DTensor parameters).
double clip_grad_norm_(nn::Module& module, double max_norm, double norm_type = 2.0);

/// The name of the wrapped module inside a FullyShardedDataParallel, which full state dicts
/// leave out of every key (PyTorch's FSDP_WRAPPED_MODULE).
inline constexpr const char* kFsdpWrappedModule = "_fsdp_wrapped_module";
/// `name` without the wrappers' own components ("_fsdp_wrapped_module."): the original name.
std::string clean_fsdp_name(const std::string& name);
/// Whether `name` is a wrapper's flat parameter ("_flat_param", "h.0._flat_param_1").
bool is_flat_param_name(const std::string& name);

}  // namespace ember::distributed
