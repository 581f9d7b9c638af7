#include "ember/distributed/fsdp.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/distributed/distributed.h"
#include "ember/ops/factory.h"

namespace ember::distributed {

namespace {

// HYBRID_SHARD's groups: consecutive blocks of `per` ranks share shards; ranks at the same place
// in their blocks replicate. Every rank makes every group in one order (new_group is collective),
// once per (group, per) in a process.
std::pair<std::shared_ptr<ProcessGroup>, std::shared_ptr<ProcessGroup>> hybrid_groups(
    const std::shared_ptr<ProcessGroup>& group, int per) {
  static std::mutex mutex;
  static std::map<std::pair<const ProcessGroup*, int>,
                  std::pair<std::shared_ptr<ProcessGroup>, std::shared_ptr<ProcessGroup>>>
      made;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(group.get(), per);
  if (auto it = made.find(key); it != made.end()) return it->second;
  int world = group->size();
  EMBER_CHECK(per >= 1 && world % per == 0, "[FullyShardedDataParallel] HYBRID_SHARD expected the world size (", world, ") to be a multiple of the ranks per machine (", per, ")");
  EMBER_CHECK(group == default_group_ptr(), "[FullyShardedDataParallel] HYBRID_SHARD builds its groups from the default group; got another process_group");
  std::shared_ptr<ProcessGroup> shard, replicate;
  for (int block = 0; block < world / per; ++block) {
    std::vector<int> ranks;
    for (int i = 0; i < per; ++i) ranks.push_back(block * per + i);
    if (auto g = new_group(ranks)) shard = g;
  }
  for (int i = 0; i < per; ++i) {
    std::vector<int> ranks;
    for (int block = 0; block < world / per; ++block) ranks.push_back(block * per + i);
    if (auto g = new_group(ranks)) replicate = g;
  }
  return made[key] = {shard, replicate};
}

}  // namespace

FlatParamOptions flat_param_options(const FsdpOptions& options) {
  FlatParamOptions out;
  out.strategy = options.sharding_strategy;
  out.mixed_precision = options.mixed_precision;
  std::shared_ptr<ProcessGroup> group =
      options.process_group ? options.process_group : default_group_ptr();
  switch (options.sharding_strategy) {
    case ShardingStrategy::FULL_SHARD:
    case ShardingStrategy::SHARD_GRAD_OP:
      out.shard_group = group;
      break;
    case ShardingStrategy::NO_SHARD:
      out.replicate_group = group;
      break;
    case ShardingStrategy::HYBRID_SHARD: {
      int per = options.ranks_per_shard_group;
      if (per <= 0) {
        const char* local = std::getenv("LOCAL_WORLD_SIZE");
        per = local ? std::atoi(local) : group->size();
      }
      std::tie(out.shard_group, out.replicate_group) = hybrid_groups(group, per);
      break;
    }
  }
  if (options.sync_module_states) out.sync_from = group;
  out.per_parameter = options.per_parameter;
  return out;
}

std::string clean_fsdp_name(const std::string& name) {
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part != kFsdpWrappedModule) out += (out.empty() ? "" : ".") + part;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

bool is_flat_param_name(const std::string& name) {
  size_t dot = name.rfind('.');
  std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
  return last.rfind("_flat_param", 0) == 0;
}

namespace {

// Rank 0's buffers everywhere before sharding (sync_module_states; the parameters are broadcast
// by the handle as it shards them).
void sync_buffers(nn::Module& module, const FlatParamOptions& flat) {
  if (!flat.sync_from || flat.sync_from->size() <= 1) return;
  NoGradGuard no_grad;
  for (Tensor& b : module.buffers()) broadcast(b, 0, flat.sync_from.get());
}

// The modules fully_shard has sharded, while they live (their hooks own the handles).
std::mutex fully_sharded_mutex;
std::map<const nn::Module*, std::weak_ptr<FlatParamHandle>>& fully_sharded() {
  static auto* modules = new std::map<const nn::Module*, std::weak_ptr<FlatParamHandle>>();
  return *modules;
}

}  // namespace

FlatParamHandle& fully_shard(nn::Module& module, FsdpOptions options) {
  options.per_parameter = true;
  std::vector<const nn::Module*> nested;
  {
    std::lock_guard<std::mutex> lock(fully_sharded_mutex);
    auto& known = fully_sharded();
    for (auto it = known.begin(); it != known.end();)
      it = it->second.expired() ? known.erase(it) : std::next(it);
    EMBER_CHECK(!known.count(&module), "[fully_shard] ", module.name(),
                " is fully_shard-ed already");
    for (auto& [name, m] : module.named_modules())
      if (m.get() != &module && known.count(m.get())) nested.push_back(m.get());
  }
  FlatParamOptions flat = flat_param_options(options);
  sync_buffers(module, flat);
  auto handle = std::make_shared<FlatParamHandle>(module, module, nested, std::move(flat));
  handle->set_forward_prefetch(options.forward_prefetch);
  module.register_forward_pre_hook(
      [handle](nn::Module&, std::vector<Tensor>&) { handle->pre_forward(); });
  module.register_forward_hook(
      [handle](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>& outputs) {
        handle->post_forward(outputs);
      });
  std::lock_guard<std::mutex> lock(fully_sharded_mutex);
  fully_sharded()[&module] = handle;
  return *handle;
}

FullyShardedDataParallel::FullyShardedDataParallel(std::shared_ptr<nn::Module> module,
                                                   FsdpOptions options)
    : module_(std::move(module)), options_(std::move(options)) {
  EMBER_CHECK(module_ != nullptr, "[FullyShardedDataParallel] expected a module, got null");
  add_child(kFsdpWrappedModule, module_);
  std::vector<const nn::Module*> nested;
  for (auto& [name, m] : module_->named_modules())
    if (m.get() != module_.get() && dynamic_cast<FullyShardedDataParallel*>(m.get()))
      nested.push_back(m.get());
  FlatParamOptions flat = flat_param_options(options_);
  sync_buffers(*module_, flat);
  handle_ = std::make_unique<FlatParamHandle>(*this, *module_, nested, std::move(flat));
  handle_->set_forward_prefetch(options_.forward_prefetch);
}

std::shared_ptr<nn::Module> FullyShardedDataParallel::clone_impl() const {
  EMBER_FAIL("[FullyShardedDataParallel] cannot be cloned; clone the module before wrapping it");
}

std::string FullyShardedDataParallel::extra_repr() const {
  return std::string("sharding_strategy=") + sharding_strategy_name(options_.sharding_strategy);
}

Tensor FullyShardedDataParallel::forward(const Tensor& x) {
  handle_->pre_forward();
  Tensor out;
  try {
    out = (*module_)(x);
  } catch (...) {
    handle_->post_forward({});
    throw;
  }
  handle_->post_forward({out});
  return out;
}

std::vector<FullyShardedDataParallel*> FullyShardedDataParallel::units() {
  std::vector<FullyShardedDataParallel*> out;
  for (auto& [name, m] : named_modules())
    if (auto* unit = dynamic_cast<FullyShardedDataParallel*>(m.get())) out.push_back(unit);
  return out;
}

FullyShardedDataParallel::NoSyncGuard::NoSyncGuard(FullyShardedDataParallel& root)
    : units_(root.units()) {
  for (auto* u : units_) u->handle_->set_require_sync(false);
}

FullyShardedDataParallel::NoSyncGuard::~NoSyncGuard() {
  for (auto* u : units_) u->handle_->set_require_sync(true);
}

nn::NamedTensors FullyShardedDataParallel::full_state_dict() {
  std::vector<FullyShardedDataParallel*> all = units();
  for (auto* u : all) u->handle_->summon_full();
  nn::NamedTensors out;
  for (auto& [name, t] : state_dict())
    if (!is_flat_param_name(name)) out.emplace_back(clean_fsdp_name(name), t.detach());
  for (auto* u : all) u->handle_->release_full(/*writeback=*/false);
  return out;
}

void FullyShardedDataParallel::load_full_state_dict(const nn::NamedTensors& state) {
  std::vector<FullyShardedDataParallel*> all = units();
  for (auto* u : all) u->handle_->summon_full();
  try {
    std::map<std::string, Tensor> mine;
    for (auto& [name, t] : state_dict())
      if (!is_flat_param_name(name)) mine.emplace(clean_fsdp_name(name), t);
    std::vector<std::string> unexpected, missing;
    std::set<std::string> given;
    for (const auto& [name, t] : state) {
      given.insert(name);
      if (!mine.count(name)) unexpected.push_back(name);
    }
    for (const auto& [name, t] : mine)
      if (!given.count(name)) missing.push_back(name);
    auto join = [](const std::vector<std::string>& names) {
      std::string s;
      for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
      return "[" + s + "]";
    };
    EMBER_CHECK(unexpected.empty() && missing.empty(),
                "[FullyShardedDataParallel] load_state_dict: missing keys ", join(missing),
                ", unexpected keys ", join(unexpected));
    NoGradGuard no_grad;
    for (const auto& [name, t] : state) {
      Tensor& to = mine.at(name);
      EMBER_CHECK(to.sizes() == t.sizes(), "[FullyShardedDataParallel] load_state_dict: ", name,
                  " expected shape ", to.sizes(), ", got ", t.sizes());
      to.copy_(t);
    }
  } catch (...) {
    for (auto* u : all) u->handle_->release_full(/*writeback=*/false);
    throw;
  }
  for (auto* u : all) u->handle_->release_full(/*writeback=*/true);
}

namespace {

// The norm of `grads` (this rank's parts of them) over the ranks of `group`, and the clipping.
double clip_shard_grads(std::vector<Tensor> grads, ProcessGroup* group, double max_norm,
                        double norm_type) {
  bool inf = std::isinf(norm_type);
  double local = 0;
  for (const Tensor& g : grads) {
    Tensor a = g.detach().to(kFloat64).abs();
    local = inf ? std::max(local, a.max().item<double>()) : local + a.pow(norm_type).sum().item<double>();
  }
  Tensor total = full({1}, local, kFloat64);
  if (group && group->size() > 1) all_reduce(total, inf ? ReduceOp::MAX : ReduceOp::SUM, group);
  double norm = inf ? total.item<double>() : std::pow(total.item<double>(), 1.0 / norm_type);
  double coef = max_norm / (norm + 1e-6);
  if (coef < 1) {
    NoGradGuard no_grad;
    for (Tensor& g : grads) g.mul_(coef);
  }
  return norm;
}

std::vector<Tensor> shard_grads(const std::vector<FlatParamHandle*>& handles) {
  std::vector<Tensor> grads;
  for (FlatParamHandle* h : handles)
    for (const Tensor& s : h->shards())
      if (s.grad().defined()) grads.push_back(s.grad());
  return grads;
}

}  // namespace

double FullyShardedDataParallel::clip_grad_norm_(double max_norm, double norm_type) {
  std::vector<FlatParamHandle*> handles;
  for (auto* u : units()) handles.push_back(u->handle_.get());
  return clip_shard_grads(shard_grads(handles), handle_->shard_group(), max_norm, norm_type);
}

double clip_grad_norm_(nn::Module& module, double max_norm, double norm_type) {
  std::vector<std::shared_ptr<FlatParamHandle>> live;
  {
    std::lock_guard<std::mutex> lock(fully_sharded_mutex);
    for (auto& [name, m] : module.named_modules()) {
      auto it = fully_sharded().find(m.get());
      if (it == fully_sharded().end()) continue;
      if (std::shared_ptr<FlatParamHandle> h = it->second.lock()) live.push_back(std::move(h));
    }
  }
  EMBER_CHECK(!live.empty(), "[clip_grad_norm_] ", module.name(),
              " has no fully_shard-ed module at or below it");
  std::vector<FlatParamHandle*> handles;
  for (auto& h : live) handles.push_back(h.get());
  return clip_shard_grads(shard_grads(handles), handles[0]->shard_group(), max_norm, norm_type);
}

}  // namespace ember::distributed
