#include "ember/distributed/flat_param.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/distributed/distributed.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"

namespace ember::distributed {

// Note [Flat parameters]
// A unit's parameters are concatenated, flattened, into one flat tensor per (dtype,
// requires_grad), padded to a multiple of the shard group's size N; rank r keeps elements
// [r * n, (r + 1) * n) of it (n = padded / N) as a leaf: what the optimizer steps. The module's
// own parameter slots stay empty between forwards.
//
// pre_forward all-gathers each flat parameter into a full buffer (in param_dtype under mixed
// precision) and puts views of it in the slots, so the module's forward runs unchanged. The views
// of a trainable flat parameter are the outputs of one autograd node whose input is the shard:
// its backward copies the views' gradients into one flat gradient, reduce-scatters it (averaged,
// as DDP averages) and hands this rank's part to the shard. PyTorch makes the unsharded
// FlatParameter the leaf and moves its gradient by hand; a node lets ember's engine do it, and
// the engine runs the node after the unit's own backward, since the views' gradients arrive
// only then (and it was made before the unit's ops, so it precedes the units before it).
//
// Freeing: the ops of the forward keep the views they saved for backward, so the gathered memory
// is freed by emptying the storage those views share, not by dropping them (PyTorch resizes
// the storage to 0). A hook on the unit's outputs runs before the unit's backward and gathers
// into the same storage again if it is empty; the node frees it once the gradients are out.
// FULL_SHARD (and HYBRID_SHARD) free after forward, SHARD_GRAD_OP only after backward.
//
// FSDP2's layout (per_parameter) is the same machinery with one flat parameter per parameter,
// padded to whole rows: rank r's part of the flat buffer is then a block of the parameter's rows,
// kept as a tensor of that shape in the parameter's own slot.

const char* sharding_strategy_name(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::FULL_SHARD:
      return "FULL_SHARD";
    case ShardingStrategy::SHARD_GRAD_OP:
      return "SHARD_GRAD_OP";
    case ShardingStrategy::NO_SHARD:
      return "NO_SHARD";
    case ShardingStrategy::HYBRID_SHARD:
      return "HYBRID_SHARD";
  }
  return "?";
}

namespace {

int group_size(const std::shared_ptr<ProcessGroup>& g) { return g ? g->size() : 1; }
int group_rank(const std::shared_ptr<ProcessGroup>& g) { return g ? g->rank() : 0; }

// Frees the memory behind `t` and every view of it; its storage object stays.
void release(const Tensor& t) { t.storage()->data = DataPtr(); }
bool resident(const Tensor& t) { return t.storage()->data.get() != nullptr; }
// Gives `t`'s storage new memory of its size.
void reallocate(const Tensor& t) {
  Tensor fresh = empty(t.sizes(), t.options());
  t.storage()->data = std::move(fresh.storage()->data);
}

}  // namespace

struct FlatParamHandle::Flat {
  struct Param {
    std::vector<std::string> names;  // every name it has below the module (tied weights)
    std::vector<Tensor*> slots;
    Shape shape;
    int64_t offset = 0;
    int64_t numel = 0;
  };
  std::vector<Param> params;
  DType dtype = kFloat32;  // the shard's
  Device device{DeviceType::CPU, 0};
  bool requires_grad = false;
  int64_t numel = 0;   // of the parameters
  int64_t padded = 0;  // a multiple of the shard group's size (of its rows, per parameter)
  // This rank's part of the padded flat buffer (what the collectives read and write), and the
  // leaf the optimizer steps: `local` itself, registered on the owner as "_flat_param", or (per
  // parameter) a view of its rows that are the parameter's (padding rows left out, as PyTorch's
  // uneven DTensor shards), held in the parameter's own slots between forwards.
  Tensor local;
  Tensor shard;
  Tensor kept_grad;         // full gradients kept under no_sync, in the reduce dtype
};

// What the node and hooks of one forward share: the handle's settings and flat parameters
// (which outlive the handle when a graph does) and the gathered buffers.
struct FlatParamHandle::Gathered {
  std::vector<std::shared_ptr<Flat>> flats;
  FlatParamOptions options;
  std::shared_ptr<bool> require_sync;
  std::vector<Tensor> full;  // per flat parameter, padded, in the compute dtype
  std::mutex mutex;

  DType compute_dtype(const Flat& f) const {
    return options.mixed_precision.param_dtype && is_floating_point(f.dtype)
               ? *options.mixed_precision.param_dtype
               : f.dtype;
  }
  // All-gathers flat parameter i's shards into full[i] (its memory allocated already).
  void gather(size_t i) {
    const Flat& f = *flats[i];
    Tensor shard = f.local.detach().to(full[i].dtype()).reshape({-1});
    if (options.shard_group)
      all_gather_into_tensor(full[i], shard, options.shard_group.get());
    else
      full[i].copy_(shard);
  }
  void ensure_resident() {
    std::lock_guard<std::mutex> lock(mutex);
    NoGradGuard no_grad;
    for (size_t i = 0; i < full.size(); ++i)
      if (!resident(full[i])) {
        // The values the forward's ops saved come back: not a modification their version
        // check should see (a copy_ would count as one).
        uint32_t version = full[i].storage()->version.load();
        reallocate(full[i]);
        gather(i);
        full[i].storage()->version.store(version);
      }
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Tensor& t : full) release(t);
  }
  // The backward of flat parameter i: its views' gradients, reduced, for the shard.
  Tensor reduce_gradients(size_t i, const std::vector<Tensor>& grads) {
    Flat& f = *flats[i];
    DType reduce_dtype = options.mixed_precision.reduce_dtype.value_or(full[i].dtype());
    Tensor flat = zeros({f.padded}, TensorOptions(reduce_dtype).with_device(f.device));
    for (size_t k = 0; k < f.params.size(); ++k)
      if (grads[k].defined())
        flat.narrow(0, f.params[k].offset, f.params[k].numel).copy_(grads[k].reshape({-1}));
    {
      std::lock_guard<std::mutex> lock(mutex);
      release(full[i]);
    }
    if (f.kept_grad.defined()) flat.add_(f.kept_grad);
    if (!*require_sync) {
      f.kept_grad = flat;
      return Tensor();
    }
    f.kept_grad = Tensor();
    int n = group_size(options.shard_group);
    Tensor part;
    if (n > 1) {
      part = empty(f.local.sizes(), flat.options());
      reduce_scatter_tensor(part, flat, ReduceOp::AVG, options.shard_group.get());
    } else {
      part = flat.view(f.local.sizes());
    }
    if (group_size(options.replicate_group) > 1)
      all_reduce(part, ReduceOp::AVG, options.replicate_group.get());
    if (f.shard.dim() > 0 && f.shard.size(0) < f.local.size(0))
      part = part.narrow(0, 0, f.shard.size(0));
    return part.to(f.dtype);
  }
};

FlatParamHandle::FlatParamHandle(nn::Module& owner, nn::Module& module,
                                 const std::vector<const nn::Module*>& nested,
                                 FlatParamOptions options)
    : options_(std::move(options)), require_sync_(std::make_shared<bool>(true)) {
  // The parameters below `module` outside the nested units, each once, grouped by (dtype,
  // requires_grad) in the order they are first met.
  std::map<const TensorImpl*, std::pair<size_t, size_t>> seen;  // -> (flat, param)
  std::set<const nn::Module*> skip(nested.begin(), nested.end());
  auto visit = [&](auto& self, nn::Module& m, const std::string& prefix) -> void {
    if (skip.count(&m)) return;
    for (const std::string& name : m.registered_names(/*parameters=*/true)) {
      Tensor* slot = m.parameter_slot(name);
      if (!slot->defined()) continue;
      if (auto it = seen.find(slot->unsafe_impl()); it != seen.end()) {
        Flat::Param& p = flats_[it->second.first]->params[it->second.second];
        p.names.push_back(prefix + name);
        p.slots.push_back(slot);
        continue;
      }
      size_t fi = 0;
      while (!options_.per_parameter && fi < flats_.size() &&
             !(flats_[fi]->dtype == slot->dtype() &&
               flats_[fi]->requires_grad == slot->requires_grad()))
        ++fi;
      if (options_.per_parameter) fi = flats_.size();
      if (fi == flats_.size()) {
        flats_.push_back(std::make_shared<Flat>());
        flats_.back()->dtype = slot->dtype();
        flats_.back()->device = slot->device();
        flats_.back()->requires_grad = slot->requires_grad();
      }
      Flat& f = *flats_[fi];
      EMBER_CHECK(slot->device() == f.device, "[FullyShardedDataParallel] expected every parameter of a unit on one device, got ", f.device, " and ", slot->device(), " (", prefix + name, ")");
      seen[slot->unsafe_impl()] = {fi, f.params.size()};
      f.params.push_back({{prefix + name}, {slot}, slot->sizes(), f.numel, slot->numel()});
      f.numel += slot->numel();
    }
    for (auto& [name, child] : m.named_children()) self(self, *child, prefix + name + ".");
  };
  visit(visit, module, "");

  int n = group_size(options_.shard_group), r = group_rank(options_.shard_group);
  NoGradGuard no_grad;
  for (size_t fi = 0; fi < flats_.size(); ++fi) {
    Flat& f = *flats_[fi];
    // Flat: elements padded to a multiple of n. Per parameter: rows (dim 0) padded to a multiple
    // of n, so that rank r's part of the flat buffer is rows [r * rows / n, ...) of the parameter.
    Shape shard_shape;
    if (options_.per_parameter) {
      const Shape& shape = f.params[0].shape;
      int64_t rows = shape.empty() ? 1 : shape[0], row = rows ? f.numel / rows : 0;
      int64_t chunk = (rows + n - 1) / n;
      f.padded = chunk * n * row;
      shard_shape = shape.empty() ? Shape{chunk} : shape;
      if (!shape.empty()) shard_shape[0] = chunk;
    } else {
      f.padded = (f.numel + n - 1) / n * n;
      shard_shape = {f.padded / n};
    }
    std::vector<Tensor> pieces;
    for (const Flat::Param& p : f.params) pieces.push_back(p.slots[0]->detach().reshape({-1}));
    if (f.padded > f.numel)
      pieces.push_back(zeros({f.padded - f.numel}, TensorOptions(f.dtype).with_device(f.device)));
    Tensor full = cat(pieces, 0);
    if (options_.sync_from && options_.sync_from->size() > 1)
      broadcast(full, 0, options_.sync_from.get());
    f.local = full.narrow(0, r * (f.padded / n), f.padded / n).clone().view(shard_shape);
    if (options_.per_parameter) {
      const Shape& shape = f.params[0].shape;
      int64_t rows = shape.empty() ? 1 : shape[0];
      int64_t mine = std::clamp<int64_t>(rows - r * shard_shape[0], 0, shard_shape[0]);
      f.shard = shape.empty() ? f.local.view({}) : f.local.narrow(0, 0, mine);
      f.shard.requires_grad_(f.requires_grad);
    } else {
      f.local = owner.register_parameter(
          fi == 0 ? "_flat_param" : "_flat_param_" + std::to_string(fi), f.local, f.requires_grad);
      f.shard = f.local;
    }
    rest(f);
  }
}

FlatParamHandle::~FlatParamHandle() = default;

void FlatParamHandle::rest(Flat& f) const {
  for (const Flat::Param& p : f.params)
    for (Tensor* slot : p.slots) *slot = options_.per_parameter ? f.shard : Tensor();
}

void FlatParamHandle::pre_forward() {
  auto g = std::make_shared<Gathered>();
  g->flats = flats_;
  g->options = options_;
  g->require_sync = require_sync_;
  for (size_t i = 0; i < flats_.size(); ++i) {
    Flat& f = *flats_[i];
    std::vector<Tensor> views;
    {
      NoGradGuard no_grad;
      g->full.push_back(empty({f.padded}, TensorOptions(g->compute_dtype(f)).with_device(f.device)));
      g->gather(i);
      for (const Flat::Param& p : f.params)
        views.push_back(g->full[i].narrow(0, p.offset, p.numel).view(p.shape));
    }
    if (f.requires_grad && GradMode::is_enabled())
      record_list("FsdpAllGatherBackward", views, {f.shard},
                  [g, i](std::vector<Tensor>& grads, const Node&) -> std::vector<Tensor> {
                    return {g->reduce_gradients(i, grads)};
                  });
    for (size_t k = 0; k < f.params.size(); ++k)
      for (Tensor* slot : f.params[k].slots) *slot = views[k];
  }
  current_ = std::move(g);
}

void FlatParamHandle::post_forward(const std::vector<Tensor>& outputs) {
  std::shared_ptr<Gathered> g = std::move(current_);
  EMBER_CHECK(g != nullptr, "[FullyShardedDataParallel] post_forward without pre_forward");
  for (const auto& f : flats_) rest(*f);
  bool backward_follows = false;
  for (const Tensor& out : outputs) backward_follows |= out.defined() && out.requires_grad();
  if (!backward_follows || options_.strategy == ShardingStrategy::FULL_SHARD ||
      options_.strategy == ShardingStrategy::HYBRID_SHARD)
    g->release_all();
  if (!backward_follows) return;
  for (const Tensor& out : outputs)
    if (out.defined() && out.requires_grad())
      out.register_hook([g](const Tensor&) {
        g->ensure_resident();
        return Tensor();
      });
}

void FlatParamHandle::summon_full() {
  EMBER_CHECK(summoned_.empty() && !current_,
              "[FullyShardedDataParallel] summon_full_params inside a forward or another summon");
  NoGradGuard no_grad;
  Gathered g;
  g.flats = flats_;
  g.options = options_;
  for (size_t i = 0; i < flats_.size(); ++i) {
    const Flat& f = *flats_[i];
    g.full.push_back(empty({f.padded}, TensorOptions(f.dtype).with_device(f.device)));
    g.gather(i);
    for (const Flat::Param& p : f.params)
      for (Tensor* slot : p.slots) *slot = g.full[i].narrow(0, p.offset, p.numel).view(p.shape);
  }
  summoned_ = std::move(g.full);
}

void FlatParamHandle::release_full(bool writeback) {
  int n = group_size(options_.shard_group), r = group_rank(options_.shard_group);
  NoGradGuard no_grad;
  for (size_t i = 0; i < flats_.size() && i < summoned_.size(); ++i) {
    Flat& f = *flats_[i];
    if (writeback)
      f.local.copy_(summoned_[i].narrow(0, r * (f.padded / n), f.padded / n).view(f.local.sizes()));
    rest(f);
  }
  summoned_.clear();
}

std::vector<std::string> FlatParamHandle::parameter_names() const {
  std::vector<std::string> names;
  for (const auto& f : flats_)
    for (const Flat::Param& p : f->params) names.insert(names.end(), p.names.begin(), p.names.end());
  return names;
}

std::vector<Tensor> FlatParamHandle::shards() const {
  std::vector<Tensor> out;
  for (const auto& f : flats_) out.push_back(f->shard);
  return out;
}

int64_t FlatParamHandle::numel() const {
  int64_t n = 0;
  for (const auto& f : flats_) n += f->numel;
  return n;
}

int64_t FlatParamHandle::shard_numel() const {
  int64_t n = 0;
  for (const auto& f : flats_) n += f->shard.numel();
  return n;
}

}  // namespace ember::distributed
