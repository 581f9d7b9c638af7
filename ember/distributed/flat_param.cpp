#include "ember/distributed/flat_param.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
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
    int64_t numel = 0;
    // Flat layout: where it starts in the flat parameter. Per parameter: where its block starts
    // in each rank's part, its rows per rank (`chunk`) and elements per row.
    int64_t offset = 0;
    int64_t chunk = 0, row = 0;
    Tensor shard;  // per parameter: this rank's rows of it, a leaf viewing `local`
    int64_t block() const { return chunk * row; }
  };
  std::vector<Param> params;
  DType dtype = kFloat32;  // the shards'
  Device device{DeviceType::CPU, 0};
  bool requires_grad = false;
  bool per_parameter = false;
  int n = 1, r = 0;          // the shard group's size and this rank in it
  int64_t numel = 0;         // of the parameters
  int64_t length = 0;        // of each rank's part; the gathered buffer holds n * length
  // This rank's part (what the collectives read and write). Flat: the leaf the optimizer steps,
  // registered on the owner as "_flat_param". Per parameter: the storage of the parameters'
  // shards, each a leaf in its own slots between forwards (padding rows left out, as PyTorch's
  // uneven DTensor shards).
  Tensor local;
  Tensor kept_grad;  // full gradients kept under no_sync, in the reduce dtype

  // The leaves backward hands gradients to: `local`, or the parameters' shards.
  std::vector<Tensor> leaves() const {
    if (!per_parameter) return {local};
    std::vector<Tensor> out;
    for (const Param& p : params) out.push_back(p.shard);
    return out;
  }
  // This rank's part of `values` (one full tensor per parameter), laid out as `local` is.
  Tensor part_of(const std::vector<Tensor>& values) const {
    NoGradGuard no_grad;
    DType as = values.empty() ? dtype : values[0].dtype();
    if (!per_parameter) {
      std::vector<Tensor> pieces;
      for (const Tensor& v : values) pieces.push_back(v.detach().reshape({-1}).to(as));
      if (n * length > numel)
        pieces.push_back(zeros({n * length - numel}, TensorOptions(as).with_device(device)));
      return cat(pieces, 0).narrow(0, r * length, length).clone();
    }
    Tensor part = zeros({length}, TensorOptions(as).with_device(device));
    for (size_t k = 0; k < params.size(); ++k) {
      const Param& p = params[k];
      Tensor padded = zeros({n * p.block()}, TensorOptions(as).with_device(device));
      padded.narrow(0, 0, p.numel).copy_(values[k].detach().reshape({-1}));
      part.narrow(0, p.offset, p.block()).copy_(padded.narrow(0, r * p.block(), p.block()));
    }
    return part;
  }
  void shard_from(const std::vector<Tensor>& values) {
    NoGradGuard no_grad;
    local.copy_(part_of(values));
  }
  // A tensor laid out as `local` is, as the leaves are: itself, or each parameter's rows.
  std::vector<Tensor> leaves_of(const Tensor& part) const {
    if (!per_parameter) return {part};
    std::vector<Tensor> out;
    for (const Param& p : params) {
      Tensor block = part.narrow(0, p.offset, p.block());
      out.push_back(p.shape.empty() ? block.view({})
                                    : block.view(shard_shape(p, p.chunk)).narrow(0, 0, rows_mine(p)));
    }
    return out;
  }
  int64_t rows_mine(const Param& p) const {
    int64_t rows = p.shape.empty() ? 1 : p.shape[0];
    return std::clamp<int64_t>(rows - r * p.chunk, 0, p.chunk);
  }
  // The reverse of leaves_of: tensors shaped as the leaves, laid out as `local` is.
  Tensor part_from_leaves(const std::vector<Tensor>& parts) const {
    if (!per_parameter) return parts[0];
    Tensor part = zeros({length}, TensorOptions(parts[0].dtype()).with_device(device));
    for (size_t k = 0; k < params.size(); ++k)
      if (parts[k].numel())
        part.narrow(0, params[k].offset, parts[k].numel()).copy_(parts[k].reshape({-1}));
    return part;
  }
  // Buffers for the gathered parameters in `dtype`: the flat parameter, or one per parameter.
  std::vector<Tensor> gather_buffers(DType as) const {
    TensorOptions o = TensorOptions(as).with_device(device);
    if (!per_parameter) return {empty({n * length}, o)};
    std::vector<Tensor> out;
    for (const Param& p : params) out.push_back(empty({n * p.block()}, o));
    return out;
  }
  // Parameter k's full value in the gathered buffers.
  Tensor value(const std::vector<Tensor>& full, size_t k) const {
    const Param& p = params[k];
    return per_parameter ? full[k].narrow(0, 0, p.numel).view(p.shape)
                         : full[0].narrow(0, p.offset, p.numel).view(p.shape);
  }
  // All-gathers every rank's part into `full` (its memory allocated): launch starts it (async
  // on the group's own thread when asked), land waits and, per parameter, copies each
  // parameter's blocks out of the one buffer the ranks' parts arrived in.
  struct Gathering {
    std::shared_ptr<Work> work;
    Tensor all;
  };
  Gathering launch(const Tensor& part, const std::vector<Tensor>& full,
                   const std::shared_ptr<ProcessGroup>& group, bool async) const {
    Tensor mine = part.detach().to(full[0].dtype());
    Tensor all = per_parameter ? (n > 1 ? empty({n * length}, mine.options()) : mine) : full[0];
    if (n > 1) return {all_gather_into_tensor(all, mine, group.get(), async), all};
    if (!per_parameter) all.copy_(mine);
    return {nullptr, all};
  }
  void land(Gathering& g, const std::vector<Tensor>& full) const {
    if (g.work) g.work->wait();
    if (!per_parameter) return;
    Tensor ranks = g.all.view({n, length});
    for (size_t k = 0; k < params.size(); ++k)
      full[k].view({n, params[k].block()}).copy_(ranks.narrow(1, params[k].offset, params[k].block()));
  }
  void gather(const std::vector<Tensor>& full, const std::shared_ptr<ProcessGroup>& group,
              const Tensor& part) const {
    Gathering g = launch(part, full, group, /*async=*/false);
    land(g, full);
  }
  void gather(const std::vector<Tensor>& full, const std::shared_ptr<ProcessGroup>& group) const {
    gather(full, group, local);
  }
  // The parameters' gradients laid out as the gathered buffer is (zeros where one is missing).
  Tensor pack(const std::vector<Tensor>& grads, DType as) const {
    TensorOptions o = TensorOptions(as).with_device(device);
    Tensor flat = zeros({n * length}, o);
    for (size_t k = 0; k < params.size(); ++k) {
      if (!grads[k].defined()) continue;
      const Param& p = params[k];
      if (!per_parameter) {
        flat.narrow(0, p.offset, p.numel).copy_(grads[k].reshape({-1}));
        continue;
      }
      Tensor padded = zeros({n * p.block()}, o);
      padded.narrow(0, 0, p.numel).copy_(grads[k].reshape({-1}));
      flat.view({n, length}).narrow(1, p.offset, p.block()).copy_(padded.view({n, p.block()}));
    }
    return flat;
  }
  // This rank's reduced part split into the leaves' gradients.
  std::vector<Tensor> split(const Tensor& part) const {
    std::vector<Tensor> out;
    for (const Tensor& g : leaves_of(part)) out.push_back(g.to(dtype));
    return out;
  }
  static Shape shard_shape(const Param& p, int64_t rows) {
    Shape s = p.shape.empty() ? Shape{rows} : p.shape;
    s[0] = rows;
    return s;
  }
};

// Note [Backward prefetch]: the units' pre-backward hooks fire in the reverse of the order
// their forwards ended. When one fires, it gathers its own parameters again (FULL_SHARD) and
// starts gathering those of the unit whose forward ended just before its own, on the group's
// thread, so that they arrive while this unit's backward computes (PyTorch's BACKWARD_PRE). An
// Order holds one iteration's units: the outermost unit's forward starts a new one.
struct FlatParamHandle::Order {
  std::mutex mutex;
  std::vector<std::weak_ptr<Gathered>> ended;  // in the order the units' forwards ended
};

namespace {
thread_local std::shared_ptr<FlatParamHandle::Order> t_order;
thread_local int t_depth = 0;  // units whose forward is running on this thread

// The dtype a unit computes in: mixed precision's param_dtype for floating parameters.
DType compute_dtype_of(const FlatParamOptions& options, DType dtype) {
  return options.mixed_precision.param_dtype && is_floating_point(dtype)
             ? *options.mixed_precision.param_dtype
             : dtype;
}
}  // namespace

// What the node and hooks of one forward share: the handle's settings and flat parameters
// (which outlive the handle when a graph does) and the gathered buffers.
struct FlatParamHandle::Gathered {
  std::vector<std::shared_ptr<Flat>> flats;
  FlatParamOptions options;
  std::shared_ptr<bool> require_sync;
  std::vector<std::vector<Tensor>> full;  // per flat parameter, in the compute dtype
  std::shared_ptr<Order> order;
  size_t ended_at = 0;  // this unit's place in order->ended
  // Gathers started ahead (Note [Backward prefetch]) and the storage versions to restore.
  std::vector<std::optional<Flat::Gathering>> pending;
  std::vector<std::vector<uint32_t>> versions;
  std::mutex mutex;

  DType compute_dtype(const Flat& f) const { return compute_dtype_of(options, f.dtype); }
  // Starts gathering flat parameter i again into its freed storage (under mutex). The values
  // the forward's ops saved come back: not a modification their version check should see.
  void start(size_t i, bool async) {
    versions[i].clear();
    for (const Tensor& t : full[i]) {
      versions[i].push_back(t.storage()->version.load());
      reallocate(t);
    }
    pending[i] = flats[i]->launch(flats[i]->local, full[i], options.shard_group, async);
  }
  void land(size_t i) {
    flats[i]->land(*pending[i], full[i]);
    pending[i].reset();
    for (size_t k = 0; k < full[i].size(); ++k)
      full[i][k].storage()->version.store(versions[i][k]);
  }
  // The pre-backward hook: this unit's parameters here, and the next unit's on their way.
  void ensure_resident() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      NoGradGuard no_grad;
      for (size_t i = 0; i < full.size(); ++i) {
        if (!pending[i] && !resident(full[i][0])) start(i, /*async=*/false);
        if (pending[i]) land(i);
      }
    }
    std::shared_ptr<Gathered> next;
    if (order) {
      std::lock_guard<std::mutex> lock(order->mutex);
      if (ended_at > 0) next = order->ended[ended_at - 1].lock();
    }
    if (next) next->prefetch();
  }
  void prefetch() {
    std::lock_guard<std::mutex> lock(mutex);
    NoGradGuard no_grad;
    for (size_t i = 0; i < full.size(); ++i)
      if (!pending[i] && !resident(full[i][0])) start(i, /*async=*/true);
  }
  void release(size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    if (pending[i]) land(i);  // a prefetch the backward did not need: finish it first
    for (const Tensor& t : full[i]) distributed::release(t);
  }
  void release_all() {
    for (size_t i = 0; i < full.size(); ++i) release(i);
  }
  // The backward of flat parameter i: its parameters' gradients, reduced, for the leaves.
  std::vector<Tensor> reduce_gradients(size_t i, const std::vector<Tensor>& grads) {
    Flat& f = *flats[i];
    Tensor flat = f.pack(grads, options.mixed_precision.reduce_dtype.value_or(full[i][0].dtype()));
    release(i);
    if (f.kept_grad.defined()) flat.add_(f.kept_grad);
    if (!*require_sync) {
      f.kept_grad = flat;
      return std::vector<Tensor>(f.leaves().size());
    }
    f.kept_grad = Tensor();
    Tensor part = flat;
    if (f.n > 1) {
      part = empty({f.length}, flat.options());
      reduce_scatter_tensor(part, flat, ReduceOp::AVG, options.shard_group.get());
    }
    if (group_size(options.replicate_group) > 1)
      all_reduce(part, ReduceOp::AVG, options.replicate_group.get());
    return f.split(part);
  }
};

// Note [Forward prefetch]: each unit learns which unit's forward started after its own (the
// last one on this thread), and with forward prefetch on, starting its forward also starts
// gathering that unit's shards asynchronously, so that they travel while this unit computes.
// The next unit's pre_forward lands them instead of gathering. A gather started ahead is used only
// if no shard changed since it started (the storage version of the local shard: an optimizer step
// in between, when the order changed, makes it gather again). Handles know each other by plain
// pointers, forgotten when a handle is destroyed (live_handles).
struct FlatParamHandle::Ahead {
  std::vector<std::vector<Tensor>> full;
  std::vector<std::optional<Flat::Gathering>> pending;
  std::vector<uint32_t> versions;  // of each flat parameter's local shard, at the start
};

namespace {
std::mutex live_mutex;
std::set<FlatParamHandle*>& live_handles() {
  static auto* live = new std::set<FlatParamHandle*>();
  return *live;
}
thread_local FlatParamHandle* t_last_started = nullptr;  // the last unit whose forward started
}  // namespace

void FlatParamHandle::start_ahead() {
  NoGradGuard no_grad;
  auto ahead = std::make_unique<Ahead>();
  for (const auto& f : flats_) {
    ahead->full.push_back(f->gather_buffers(compute_dtype_of(options_, f->dtype)));
    ahead->versions.push_back(f->local.storage()->version.load());
    ahead->pending.push_back(f->launch(f->local, ahead->full.back(), options_.shard_group,
                                       /*async=*/true));
  }
  ahead_ = std::move(ahead);
}

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
      while (fi < flats_.size() && !(flats_[fi]->dtype == slot->dtype() &&
                                     flats_[fi]->requires_grad == slot->requires_grad()))
        ++fi;
      if (fi == flats_.size()) {
        flats_.push_back(std::make_shared<Flat>());
        flats_.back()->dtype = slot->dtype();
        flats_.back()->device = slot->device();
        flats_.back()->requires_grad = slot->requires_grad();
      }
      Flat& f = *flats_[fi];
      EMBER_CHECK(slot->device() == f.device, "[FullyShardedDataParallel] expected every parameter of a unit on one device, got ", f.device, " and ", slot->device(), " (", prefix + name, ")");
      seen[slot->unsafe_impl()] = {fi, f.params.size()};
      Flat::Param p;
      p.names = {prefix + name};
      p.slots = {slot};
      p.shape = slot->sizes();
      p.numel = slot->numel();
      f.params.push_back(std::move(p));
      f.numel += slot->numel();
    }
    for (auto& [name, child] : m.named_children()) self(self, *child, prefix + name + ".");
  };
  visit(visit, module, "");

  int n = group_size(options_.shard_group), r = group_rank(options_.shard_group);
  NoGradGuard no_grad;
  for (size_t fi = 0; fi < flats_.size(); ++fi) {
    Flat& f = *flats_[fi];
    f.per_parameter = options_.per_parameter;
    f.n = n;
    f.r = r;
    // Flat: the elements padded to a multiple of n, rank r keeping the r-th n-th. Per parameter:
    // each parameter's rows (dim 0) padded to a multiple of n, rank r keeping the r-th block of
    // rows of each, one after another.
    std::vector<Tensor> values;
    for (Flat::Param& p : f.params) {
      Tensor value = p.slots[0]->detach();
      if (options_.sync_from && options_.sync_from->size() > 1) {
        value = value.clone();
        broadcast(value, 0, options_.sync_from.get());
      }
      values.push_back(value);
      int64_t rows = p.shape.empty() ? 1 : p.shape[0];
      p.chunk = (rows + n - 1) / n;
      p.row = rows ? p.numel / rows : 0;
      if (f.per_parameter) {
        p.offset = f.length;
        f.length += p.block();
      }
    }
    if (!f.per_parameter) {
      int64_t offset = 0;
      for (Flat::Param& p : f.params) {
        p.offset = offset;
        offset += p.numel;
      }
      f.length = (f.numel + n - 1) / n;
    }
    f.local = zeros({f.length}, TensorOptions(f.dtype).with_device(f.device));
    f.shard_from(values);
    if (f.per_parameter) {
      std::vector<Tensor> shards = f.leaves_of(f.local);
      for (size_t k = 0; k < f.params.size(); ++k)
        f.params[k].shard = shards[k].requires_grad_(f.requires_grad);
    } else {
      f.local = owner.register_parameter(
          fi == 0 ? "_flat_param" : "_flat_param_" + std::to_string(fi), f.local, f.requires_grad);
    }
    rest(f);
  }
  std::lock_guard<std::mutex> lock(live_mutex);
  live_handles().insert(this);
}

FlatParamHandle::~FlatParamHandle() {
  std::lock_guard<std::mutex> lock(live_mutex);
  live_handles().erase(this);
  for (FlatParamHandle* h : live_handles())
    if (h->next_forward_ == this) h->next_forward_ = nullptr;
  if (t_last_started == this) t_last_started = nullptr;
  if (ahead_)
    for (auto& pending : ahead_->pending)
      if (pending && pending->work) pending->work->wait();  // nothing writes freed buffers
}

void FlatParamHandle::rest(Flat& f) const {
  for (const Flat::Param& p : f.params)
    for (Tensor* slot : p.slots) *slot = f.per_parameter ? p.shard : Tensor();
}

void FlatParamHandle::pre_forward() {
  if (current_) post_forward({});  // the last forward threw before its post_forward ran
  auto g = std::make_shared<Gathered>();
  g->flats = flats_;
  g->options = options_;
  g->require_sync = require_sync_;
  if (t_depth++ == 0) t_order = std::make_shared<Order>();
  g->order = t_order;
  g->pending.resize(flats_.size());
  g->versions.resize(flats_.size());
  std::unique_ptr<Ahead> ahead = std::move(ahead_);
  {
    // This unit follows the last one started (Note [Forward prefetch]); the next one starts on
    // its way now.
    std::lock_guard<std::mutex> lock(live_mutex);
    // (The last one started may be gone: a handle destroyed on another thread.)
    if (t_last_started && t_last_started != this && live_handles().count(t_last_started))
      t_last_started->next_forward_ = this;
    t_last_started = this;
    FlatParamHandle* next = next_forward_;
    if (forward_prefetch_ && next && next != this && !next->current_ && !next->ahead_)
      next->start_ahead();
  }
  bool used_ahead = false;
  for (size_t i = 0; i < flats_.size(); ++i) {
    Flat& f = *flats_[i];
    std::vector<Tensor> views;
    {
      NoGradGuard no_grad;
      if (ahead) {
        f.land(*ahead->pending[i], ahead->full[i]);
        ahead->pending[i].reset();
      }
      if (ahead && ahead->versions[i] == f.local.storage()->version.load()) {
        g->full.push_back(std::move(ahead->full[i]));
        used_ahead = true;
      } else {
        g->full.push_back(f.gather_buffers(g->compute_dtype(f)));
        f.gather(g->full[i], options_.shard_group);
      }
      for (size_t k = 0; k < f.params.size(); ++k) views.push_back(f.value(g->full[i], k));
    }
    if (f.requires_grad && GradMode::is_enabled())
      record_list("FsdpAllGatherBackward", views, f.leaves(),
                  [g, i](std::vector<Tensor>& grads, const Node&) {
                    return g->reduce_gradients(i, grads);
                  });
    for (size_t k = 0; k < f.params.size(); ++k)
      for (Tensor* slot : f.params[k].slots) *slot = views[k];
  }
  if (used_ahead) ++prefetched_forwards_;
  current_ = std::move(g);
}

void FlatParamHandle::post_forward(const std::vector<Tensor>& outputs) {
  std::shared_ptr<Gathered> g = std::move(current_);
  EMBER_CHECK(g != nullptr, "[FullyShardedDataParallel] post_forward without pre_forward");
  --t_depth;
  {
    std::lock_guard<std::mutex> lock(g->order->mutex);
    g->ended_at = g->order->ended.size();
    g->order->ended.push_back(g);
  }
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
  for (const auto& f : flats_) {
    summoned_.push_back(f->gather_buffers(f->dtype));
    f->gather(summoned_.back(), options_.shard_group);
    for (size_t k = 0; k < f->params.size(); ++k)
      for (Tensor* slot : f->params[k].slots) *slot = f->value(summoned_.back(), k);
  }
}

void FlatParamHandle::release_full(bool writeback) {
  for (size_t i = 0; i < flats_.size() && i < summoned_.size(); ++i) {
    Flat& f = *flats_[i];
    if (writeback) {
      std::vector<Tensor> values;
      for (size_t k = 0; k < f.params.size(); ++k) values.push_back(f.value(summoned_[i], k));
      f.shard_from(values);
    }
    rest(f);
  }
  summoned_.clear();
}

std::vector<Tensor> FlatParamHandle::shards() const {
  std::vector<Tensor> out;
  for (const auto& f : flats_)
    for (const Tensor& t : f->leaves()) out.push_back(t);
  return out;
}

nn::NamedTensors FlatParamHandle::gather_like_shards(const std::vector<Tensor>& parts) const {
  nn::NamedTensors out;
  NoGradGuard no_grad;
  size_t next = 0;
  for (const auto& f : flats_) {
    size_t count = f->leaves().size();
    EMBER_CHECK(next + count <= parts.size(), "[FullyShardedDataParallel] expected ",
                shards().size(), " tensors laid out as the shards, got ", parts.size());
    std::vector<Tensor> mine(parts.begin() + next, parts.begin() + next + count);
    next += count;
    std::vector<Tensor> full = f->gather_buffers(mine[0].dtype());
    f->gather(full, options_.shard_group, f->part_from_leaves(mine));
    for (size_t k = 0; k < f->params.size(); ++k)
      out.emplace_back(f->params[k].names[0], f->value(full, k).clone());
  }
  return out;
}

std::vector<Tensor> FlatParamHandle::shard_like_parameters(const nn::NamedTensors& values) const {
  std::map<std::string, Tensor> by_name(values.begin(), values.end());
  std::vector<Tensor> out;
  NoGradGuard no_grad;
  for (const auto& f : flats_) {
    std::vector<Tensor> full;
    for (const Flat::Param& p : f->params) {
      auto it = by_name.find(p.names[0]);
      if (it == by_name.end()) {  // (a frozen parameter has no optimizer state)
        DType as = values.empty() ? f->dtype : values[0].second.dtype();
        full.push_back(zeros(p.shape, TensorOptions(as).with_device(f->device)));
        continue;
      }
      EMBER_CHECK(it->second.sizes() == p.shape, "[FullyShardedDataParallel] ", p.names[0],
                  " expected shape ", p.shape, ", got ", it->second.sizes());
      full.push_back(it->second);
    }
    for (const Tensor& t : f->leaves_of(f->part_of(full))) out.push_back(t.clone());
  }
  return out;
}

std::vector<std::vector<std::string>> FlatParamHandle::shard_names() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& f : flats_) {
    if (!f->per_parameter) out.emplace_back();
    for (const Flat::Param& p : f->params) {
      if (f->per_parameter) out.emplace_back();
      out.back().push_back(p.names[0]);
    }
  }
  return out;
}

std::vector<Shape> FlatParamHandle::full_shapes() const {
  std::vector<Shape> out;
  for (const auto& f : flats_) {
    if (!f->per_parameter) out.push_back({f->n * f->length});
    for (const Flat::Param& p : f->params)
      if (f->per_parameter) out.push_back(p.shape);
  }
  return out;
}

}  // namespace ember::distributed
