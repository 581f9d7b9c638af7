// The parameters of one FSDP unit kept as flat shards (PyTorch's FlatParamHandle): each rank holds
// 1/N of them between forwards, gathers them for the unit's forward and backward, and
// reduce-scatters their gradients. Note [Flat parameters] in flat_param.cpp says how.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember::distributed {

/// PyTorch's torch.distributed.fsdp.ShardingStrategy.
enum class ShardingStrategy {
  FULL_SHARD,     // parameters, gradients and optimizer state sharded; gathered again for backward
  SHARD_GRAD_OP,  // gradients and optimizer state sharded; parameters kept from forward to backward
  NO_SHARD,       // nothing sharded: DDP's all-reduce of gradients
  HYBRID_SHARD,   // FULL_SHARD within a machine, replicated (all-reduced) across machines
};
const char* sharding_strategy_name(ShardingStrategy s);

/// PyTorch's MixedPrecision: the dtype parameters are gathered and computed in, and the one
/// gradients are reduced in; the shards (what the optimizer steps) keep their own.
struct MixedPrecision {
  std::optional<DType> param_dtype;
  std::optional<DType> reduce_dtype;
};

struct FlatParamOptions {
  ShardingStrategy strategy = ShardingStrategy::FULL_SHARD;
  MixedPrecision mixed_precision;
  /// Ranks sharing the shards, and ranks holding replicas of them (their gradients all-reduced):
  /// FULL_SHARD and SHARD_GRAD_OP shard over the whole group, NO_SHARD replicates over it,
  /// HYBRID_SHARD shards within shard_group and replicates across replicate_group. Null: one rank.
  std::shared_ptr<ProcessGroup> shard_group;
  std::shared_ptr<ProcessGroup> replicate_group;
  /// Rank 0 of the group broadcasts its parameters before sharding (sync_module_states).
  std::shared_ptr<ProcessGroup> sync_from;
  /// FSDP2's layout: each parameter sharded on its own along dim 0 (rank r keeps its rows r/N),
  /// the shard kept in the parameter's own slot, so that parameters() and state_dict() keep their
  /// names and number of dimensions. Otherwise FSDP1's: one flat parameter per (dtype,
  /// requires_grad), registered on the owner, the slots empty between forwards.
  bool per_parameter = false;
};

class FlatParamHandle {
 public:
  /// Takes the parameters of `module` that are not below one of `nested` (units of their own),
  /// a parameter used in several places once, and makes one flat parameter per (dtype,
  /// requires_grad): this rank's shard of it is a leaf registered on `owner` as "_flat_param"
  /// ("_flat_param_1", ...: frozen parameters beside trainable ones make a second). The
  /// original slots are emptied: outside forward the module holds no full parameter.
  /// per_parameter (FSDP2) shards each parameter on its own instead and leaves its shard in its
  /// slots.
  FlatParamHandle(nn::Module& owner, nn::Module& module,
                  const std::vector<const nn::Module*>& nested, FlatParamOptions options);
  ~FlatParamHandle();
  FlatParamHandle(const FlatParamHandle&) = delete;
  FlatParamHandle& operator=(const FlatParamHandle&) = delete;

  /// Before the unit's forward: gathers the shards and puts views of the full parameters in the
  /// original slots (their gradients flow back to the shards through one reduce-scatter).
  void pre_forward();
  /// After it: empties the slots again. FULL_SHARD frees the gathered memory, and hooks
  /// `outputs` so that backward gathers it again before the unit's backward runs.
  void post_forward(const std::vector<Tensor>& outputs);

  /// Forward prefetch (Note [Forward prefetch]): when this unit's forward starts, the gather of
  /// the unit whose forward followed it last time starts too, on the group's thread (PyTorch's
  /// forward_prefetch=True). Off by default, as there: it holds one more unit gathered.
  void set_forward_prefetch(bool on) { forward_prefetch_ = on; }
  /// Gathers this unit's forwards found already started by a prefetch (for tests and benchmarks).
  int64_t prefetched_forwards() const { return prefetched_forwards_; }

  /// While false, backward keeps the unit's full gradients (adding them up) instead of
  /// reducing them; the next backward with it true reduces what was kept too (FSDP.no_sync).
  void set_require_sync(bool on) { *require_sync_ = on; }

  /// Puts full copies of the parameters, gathered from every rank, in the original slots (state
  /// dicts, FSDP.summon_full_params); release_full empties them again, first writing what they
  /// hold into this rank's shards when `writeback`.
  void summon_full();
  void release_full(bool writeback);
  /// For an optimizer's state of the shards (FSDP's optimizer state dicts): tensors laid out as
  /// shards() are gathered into one full tensor per parameter (under its first name), and full
  /// tensors per parameter become this rank's parts, laid out as shards() (zeros for a parameter
  /// `values` lacks).
  nn::NamedTensors gather_like_shards(const std::vector<Tensor>& parts) const;
  std::vector<Tensor> shard_like_parameters(const nn::NamedTensors& values) const;
  /// The parameters each shard stands for (their first names), in shards() order.
  std::vector<std::vector<std::string>> shard_names() const;
  /// This rank's shards (the leaves the optimizer steps), and the full shapes of what each
  /// stands for (a flat parameter's padded length; per parameter, the parameter's shape).
  std::vector<Tensor> shards() const;
  std::vector<Shape> full_shapes() const;
  /// The ranks that share the shards (null: one rank).
  ProcessGroup* shard_group() const { return options_.shard_group.get(); }

 private:
  struct Flat;      // one flat parameter (flat_param.cpp)
  struct Gathered;  // one forward's gathered parameters, shared with its node and hooks
 public:
  struct Order;  // the units of one iteration (Note [Backward prefetch])

 private:
  /// What the slots of `f` hold between forwards: its shard (per parameter) or nothing.
  void rest(Flat& f) const;
  std::vector<std::shared_ptr<Flat>> flats_;
  FlatParamOptions options_;
  std::shared_ptr<bool> require_sync_;  // read by backward, which may outlive the handle
  std::shared_ptr<Gathered> current_;   // between pre_forward and post_forward
  struct Ahead;                         // a gather started by the previous unit's forward
  std::unique_ptr<Ahead> ahead_;
  FlatParamHandle* next_forward_ = nullptr;  // the unit whose forward followed this one's last
  bool forward_prefetch_ = false;
  int64_t prefetched_forwards_ = 0;
  void start_ahead();
  std::vector<std::vector<Tensor>> summoned_;  // summon_full's gathered buffers
};

}  // namespace ember::distributed
