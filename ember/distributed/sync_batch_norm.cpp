#include "ember/distributed/sync_batch_norm.h"

#include "ember/distributed/distributed.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/batch_norm.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/reduce.h"

namespace ember::distributed {

Tensor sync_batch_norm(const Tensor& x_in, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const std::shared_ptr<ProcessGroup>& group) {
  EMBER_CHECK(group != nullptr, "[SyncBatchNorm] expected a process group");
  EMBER_CHECK(x_in.dim() >= 2, "[SyncBatchNorm] expected at least 2D input (got ", x_in.dim(),
              "D input of shape ", x_in.sizes(), ")");
  Tensor x = x_in.contiguous();
  int64_t C = x.size(1), count = C ? x.numel() / C : 0;
  Tensor mean, invstd;
  if (count > 0) {
    std::tie(mean, invstd) = batch_norm_stats(x, eps);
  } else {  // an empty batch on this rank counts for nothing in the union
    mean = zeros(
        {C}, TensorOptions(x.dtype() == kFloat64 ? kFloat64 : kFloat32).with_device(x.device()));
    invstd = ones(mean.sizes(), mean.options());
  }
  // One all-gather of [mean | invstd | count] per rank, as PyTorch's SyncBatchNorm does.
  Tensor local = cat({mean, invstd, full({1}, static_cast<double>(count), mean.options())});
  std::vector<Tensor> gathered;
  for (int r = 0; r < group->size(); ++r) gathered.push_back(empty_like(local));
  group->all_gather(gathered, local)->wait();
  Tensor all = stack(gathered);  // (W, 2C + 1)
  Tensor counts = all.select(1, 2 * C);
  double total = counts.sum().item<double>();
  EMBER_CHECK(total > 1,
              "[SyncBatchNorm] expected more than 1 value per channel over all ranks "
              "when training, got ",
              total, " (input size ", x.sizes(), " on rank ", group->rank(), ")");
  std::tie(mean, invstd) =
      batch_norm_gather_stats_with_counts(x, all.narrow(1, 0, C), all.narrow(1, C, C), running_mean,
                                          running_var, momentum, eps, counts);
  Tensor y = batch_norm_elemt(x, weight, bias, mean, invstd, eps);
  if (any_requires_grad({&x, &weight, &bias})) {
    record("SyncBatchNormBackward", {&y}, {&x, &weight, &bias},
           [sx = SavedTensor(x), sw = SavedTensor(weight), mean, invstd, total, group](
               const Tensor& g, const Node& n) -> TensorList {
             EMBER_CHECK(!GradMode::is_enabled(),
                         "[SyncBatchNorm] double backward (create_graph) is not supported");
             const Tensor& x = sx.get();
             const Tensor& w = sw.get();
             auto [sum_dy, sum_dy_xmu, gw, gb] =
                 batch_norm_backward_reduce(g, x, mean, invstd, w, n.needs_input_grad(0),
                                            n.needs_input_grad(1), n.needs_input_grad(2));
             Tensor gx;
             if (n.needs_input_grad(0)) {
               // The input's gradient needs the sums of the whole batch: one all-reduce.
               int64_t C = x.size(1);
               Tensor sums = cat({sum_dy, sum_dy_xmu});
               group->all_reduce(sums, ReduceOp::SUM)->wait();
               gx = batch_norm_backward_elemt(g, x, mean, invstd, w, sums.narrow(0, 0, C),
                                              sums.narrow(0, C, C), total);
             }
             return {gx, gw, gb};
           });
  }
  return y;
}

SyncBatchNorm::SyncBatchNorm(int64_t num_features, double eps, double momentum, bool affine,
                             bool track_running_stats, std::shared_ptr<ProcessGroup> process_group)
    : nn::BatchNorm(num_features, eps, momentum, affine, track_running_stats,
                    {2, 3, 4, 5, 6, 7, 8}),
      group_(std::move(process_group)) {}

Tensor SyncBatchNorm::forward(const Tensor& x) {
  EMBER_CHECK(x.dim() >= 2, "[SyncBatchNorm] expected at least 2D input (got ", x.dim(),
              "D input of shape ", x.sizes(), ")");
  EMBER_CHECK(x.size(1) == num_features, "[SyncBatchNorm] expected ", num_features,
              " channels in dim 1, got input of shape ", x.sizes());
  bool batch_stats = is_training() || !track_running_stats;
  if (batch_stats && !group_) group_ = default_group_ptr();
  if (!batch_stats || group_->size() == 1) return nn::BatchNorm::forward(x);
  if (is_training() && track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return sync_batch_norm(x, track_running_stats ? running_mean : Tensor(),
                         track_running_stats ? running_var : Tensor(), weight, bias, momentum, eps,
                         group_);
}

std::shared_ptr<nn::Module> SyncBatchNorm::clone_impl() const {
  return std::make_shared<SyncBatchNorm>(num_features, eps, momentum, affine, track_running_stats,
                                         group_);
}

std::shared_ptr<nn::Module> SyncBatchNorm::convert_sync_batchnorm(
    std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> process_group) {
  EMBER_CHECK(module != nullptr, "[convert_sync_batchnorm] the module is null");
  std::shared_ptr<nn::Module> out = module;
  auto* bn = dynamic_cast<nn::BatchNorm*>(module.get());
  if (bn && !dynamic_cast<SyncBatchNorm*>(bn)) {
    auto sync = std::make_shared<SyncBatchNorm>(bn->num_features, bn->eps, bn->momentum, bn->affine,
                                                bn->track_running_stats, process_group);
    // The same tensors, not copies: optimizers and checkpoints holding them see one model.
    sync->weight = bn->weight;
    sync->bias = bn->bias;
    sync->running_mean = bn->running_mean;
    sync->running_var = bn->running_var;
    sync->num_batches_tracked = bn->num_batches_tracked;
    sync->train(bn->is_training());
    out = sync;
  }
  for (auto& [name, child] : module->named_children()) {
    std::shared_ptr<nn::Module> converted = convert_sync_batchnorm(child, process_group);
    if (converted != child) out->replace_module(name, converted);
  }
  return out;
}

}  // namespace ember::distributed
