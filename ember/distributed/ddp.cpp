#include "ember/distributed/ddp.h"

#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/engine.h"
#include "ember/core/autograd_meta.h"
#include "ember/core/grad_mode.h"
#include "ember/distributed/distributed.h"
#include "ember/ops/factory.h"

namespace ember::distributed {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

CommHook compress_hook(DType wire) {
  return [wire](ProcessGroup& group, GradBucket& bucket) -> std::function<Tensor()> {
    Tensor compressed = bucket.buffer.to(wire).div_(group.size());
    std::shared_ptr<Work> work = group.all_reduce(compressed);
    DType dtype = bucket.buffer.dtype();
    return [work, compressed, dtype] {
      work->wait();
      return compressed.to(dtype);
    };
  };
}

}  // namespace

CommHook allreduce_hook() {
  return [](ProcessGroup& group, GradBucket& bucket) -> std::function<Tensor()> {
    Tensor buffer = bucket.buffer.div_(group.size());
    std::shared_ptr<Work> work = group.all_reduce(buffer);
    return [work, buffer] {
      work->wait();
      return buffer;
    };
  };
}

CommHook fp16_compress_hook() { return compress_hook(kFloat16); }
CommHook bf16_compress_hook() { return compress_hook(kBFloat16); }

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 DDPOptions options)
    : module_(std::move(module)), options_(std::move(options)), hook_(allreduce_hook()) {
  EMBER_CHECK(module_ != nullptr, "[DistributedDataParallel] expected a module, got null");
  group_ = options_.process_group ? options_.process_group : default_group_ptr();
  add_child("module", module_);
  for (auto& [name, p] : module_->named_parameters()) {
    if (!p.requires_grad()) continue;
    names_.push_back(name);
    params_.push_back(p);
  }
  check_same_parameters();
  broadcast_state();
  build_buckets();
  ready_.assign(params_.size(), false);
  used_.assign(params_.size(), true);
  for (size_t i = 0; i < params_.size(); ++i)
    handles_.push_back(params_[i].register_post_accumulate_grad_hook(
        [this, i](const Tensor&) { on_gradient(i); }));
}

DistributedDataParallel::~DistributedDataParallel() {
  for (RemovableHandle& h : handles_) h.remove();
}

std::shared_ptr<nn::Module> DistributedDataParallel::clone_impl() const {
  EMBER_FAIL("[DistributedDataParallel] cannot be cloned; clone the wrapped module instead");
}

// Every rank describes its parameters as (count, then ndim and sizes of each); ranks compare
// with rank 0 and the first difference names the parameter.
void DistributedDataParallel::check_same_parameters() {
  std::vector<double> mine = {static_cast<double>(params_.size())};
  for (const Tensor& p : params_) {
    mine.push_back(static_cast<double>(p.dim()));
    for (int64_t s : p.sizes()) mine.push_back(static_cast<double>(s));
  }
  Tensor length = full({1}, static_cast<double>(mine.size()), kFloat64);
  all_reduce(length, ReduceOp::MAX, group_.get());
  mine.resize(static_cast<size_t>(length.item<double>()), -1);
  Tensor local = from_vector(mine);
  std::vector<Tensor> all;
  for (int r = 0; r < group_->size(); ++r) all.push_back(zeros_like(local));
  all_gather(all, local, group_.get());
  Tensor reference = all[0];
  for (int r = 1; r < group_->size(); ++r) {
    if (all[r].equal(reference)) continue;
    // Walk rank 0's description beside rank r's to find the first differing parameter.
    const double* a = reference.data_ptr<double>();
    const double* b = all[r].data_ptr<double>();
    EMBER_CHECK(a[0] == b[0], "[DistributedDataParallel] rank 0 has ", a[0],
                " parameters that require grad but rank ", r, " has ", b[0]);
    size_t pos = 1;
    for (size_t i = 0; i < params_.size(); ++i) {
      size_t n = 1 + static_cast<size_t>(a[pos]);
      bool same = true;
      for (size_t k = 0; k < n; ++k) same = same && a[pos + k] == b[pos + k];
      EMBER_CHECK(same, "[DistributedDataParallel] parameter '", names_[i], "' (index ", i,
                  ") has different shapes on rank 0 and rank ", r,
                  "; every rank must build the same model");
      pos += n;
    }
  }
}

void DistributedDataParallel::broadcast_state() {
  if (group_->size() == 1) return;
  NoGradGuard no_grad;
  for (const Tensor& p : params_) broadcast(p.detach(), 0, group_.get());
  for (const Tensor& b : module_->buffers()) broadcast(b, 0, group_.get());
}

// Reverse parameter order (about the order backward produces gradients); a new bucket when the
// dtype changes or the cap is reached; the first bucket has a smaller cap.
void DistributedDataParallel::build_buckets() {
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  auto cap_bytes = [&](size_t bucket) {
    double mb = bucket == 0 ? options_.first_bucket_mb : options_.bucket_cap_mb;
    return static_cast<size_t>(mb * 1024 * 1024);
  };
  size_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    bool fresh = buckets_.empty() || params_[buckets_.back().params.front()].dtype() != p.dtype() ||
                 bytes >= cap_bytes(buckets_.size() - 1);
    if (fresh) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& b = buckets_.back();
    int64_t offset = b.offsets.empty() ? 0 : b.offsets.back() + params_[b.params.back()].numel();
    bucket_of_[k] = buckets_.size() - 1;
    slot_of_[k] = b.params.size();
    b.params.push_back(k);
    b.offsets.push_back(offset);
    bytes += p.nbytes();
  }
  for (Bucket& b : buckets_) {
    const Tensor& last = params_[b.params.back()];
    b.buffer = zeros({b.offsets.back() + last.numel()}, TensorOptions(last.dtype()));
  }
}

std::vector<std::vector<size_t>> DistributedDataParallel::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

Tensor DistributedDataParallel::forward(const Tensor& x) {
  pre_forward();
  Tensor out = (*module_)(x);
  post_forward({out});
  return out;
}

void DistributedDataParallel::pre_forward() {
  if (options_.broadcast_buffers && group_->size() > 1) {
    NoGradGuard no_grad;
    for (const Tensor& b : module_->buffers()) broadcast(b, 0, group_.get());
  }
}

void DistributedDataParallel::post_forward(const std::vector<Tensor>& outputs) {
  if (!GradMode::is_enabled()) return;
  for (const Tensor& out : outputs)
    if (out.defined() && out.requires_grad()) {
      prepare_for_backward(outputs);
      return;
    }
}

// With find_unused_parameters, the parameters the outputs' graph does not reach will get no
// gradient: they count as ready from the start (their bucket slots hold zeros).
void DistributedDataParallel::prepare_for_backward(const std::vector<Tensor>& outputs) {
  used_.assign(params_.size(), true);
  if (!options_.find_unused_parameters) return;
  std::unordered_map<Node*, size_t> accumulator_of;
  for (size_t i = 0; i < params_.size(); ++i) {
    Edge e = gradient_edge(params_[i]);
    if (e.valid()) accumulator_of[e.node.get()] = i;
  }
  std::vector<bool> reached(params_.size(), false);
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (const Tensor& output : outputs)
    if (output.defined() && output.grad_fn()) stack.push_back(output.grad_fn().get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    auto it = accumulator_of.find(n);
    if (it != accumulator_of.end()) reached[it->second] = true;
    for (const Edge& e : n->next_edges)
      if (e.valid()) stack.push_back(e.node.get());
  }
  used_ = reached;
}

void DistributedDataParallel::on_gradient(size_t index) {
  if (!require_sync_) return;
  if (!in_backward_) {
    in_backward_ = true;
    next_bucket_ = 0;
    ready_.assign(params_.size(), false);
    for (Bucket& b : buckets_) {
      b.pending = b.params.size();
      b.waiter = nullptr;
    }
    timing_ = {};
    autograd::queue_callback([this] { finalize(); });
    for (size_t i = 0; i < params_.size(); ++i)
      if (!used_[i] && i != index) {
        ready_[i] = true;
        Bucket& b = buckets_[bucket_of_[i]];
        const Tensor& g = params_[i].grad();
        Tensor slot = b.buffer.narrow(0, b.offsets[slot_of_[i]], params_[i].numel());
        if (g.defined())
          slot.copy_(g.reshape({-1}));
        else
          slot.zero_();
        --b.pending;
      }
  }
  if (ready_[index]) return;  // a parameter used twice in one graph accumulates once more: fine
  ready_[index] = true;
  Bucket& b = buckets_[bucket_of_[index]];
  Tensor slot = b.buffer.narrow(0, b.offsets[slot_of_[index]], params_[index].numel());
  const Tensor& g = params_[index].grad();
  if (!(options_.gradient_as_bucket_view && g.defined() && g.data_ptr() == slot.data_ptr()))
    slot.copy_(g.reshape({-1}));
  --b.pending;
  launch_ready_buckets();
}

// Buckets start in index order on every rank, so every rank issues the same collectives in the
// same order even when backward makes gradients ready in a different order.
void DistributedDataParallel::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_];
    if (next_bucket_ == 0) timing_.first_launch = now_seconds();
    std::vector<Tensor> params;
    for (size_t i : b.params) params.push_back(params_[i]);
    GradBucket gb{static_cast<int>(next_bucket_), b.buffer, params,
                  next_bucket_ + 1 == buckets_.size()};
    b.waiter = hook_(*group_, gb);
    ++next_bucket_;
  }
}

void DistributedDataParallel::finalize() {
  in_backward_ = false;
  timing_.backward_end = now_seconds();
  for (size_t i = 0; i < params_.size(); ++i)
    EMBER_CHECK(
        ready_[i], "[DistributedDataParallel] parameter '", names_[i], "' (index ", i,
        ") received no gradient in this backward on rank ", group_->rank(),
        ". If the model does not use every parameter in every forward, construct DistributedDataParallel with find_unused_parameters = true");
  EMBER_ASSERT(next_bucket_ == buckets_.size(), "DDP launched ", next_bucket_, " of ",
               buckets_.size(), " buckets with every parameter ready");
  NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    Tensor averaged = b.waiter();
    b.waiter = nullptr;
    if (averaged.unsafe_impl() != b.buffer.unsafe_impl()) b.buffer.copy_(averaged);
    for (size_t s = 0; s < b.params.size(); ++s) {
      Tensor& p = params_[b.params[s]];
      Tensor view = b.buffer.narrow(0, b.offsets[s], p.numel()).view(p.sizes());
      if (options_.gradient_as_bucket_view)
        p.set_grad(view);
      else if (p.grad().defined())
        p.mutable_grad().copy_(view);
      else
        p.set_grad(view.clone());
    }
  }
  timing_.last_reduce_end = now_seconds();
}

}  // namespace ember::distributed
