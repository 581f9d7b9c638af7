// SyncBatchNorm (torch.nn.SyncBatchNorm): batch norm whose statistics are those of the batch of
// every rank of a process group together, so that N ranks with B samples each normalise as one
// process with N * B would. Forward: each rank's (mean, invstd, count) are all-gathered and
// combined; backward: the per-channel sums (sum_dy, sum_dy_xmu) are all-reduced. Both collectives
// sit inside one autograd node, so the backward pass communicates by itself.
#pragma once

#include <memory>

#include "ember/distributed/process_group.h"
#include "ember/nn/modules/batchnorm.h"

namespace ember::distributed {

/// Batch norm over the concatenation of every rank's x (N_r, C, *) in `group` (training mode):
/// running statistics, where given, are updated with the union's mean and unbiased variance. The
/// input's gradient is that of the whole batch's loss, sum over ranks of each rank's; weight and
/// bias get this rank's part (DDP averages them). Every rank must call it, in the same order.
Tensor sync_batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const std::shared_ptr<ProcessGroup>& group);

class SyncBatchNorm : public nn::BatchNorm {
 public:
  /// `process_group`: the default group (at the first forward) when null.
  explicit SyncBatchNorm(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                         bool affine = true, bool track_running_stats = true,
                         std::shared_ptr<ProcessGroup> process_group = nullptr);
  /// Inputs (N, C, *) of any rank >= 2; in evaluation mode, or with one rank, plain batch norm.
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "SyncBatchNorm"; }

  /// Replaces every BatchNorm1d/2d in `module` (or `module` itself) by a SyncBatchNorm that shares
  /// its parameters and buffers (the same tensors) and its training mode; returns the module to
  /// use (PyTorch's convert_sync_batchnorm). Models that keep handles to their children follow
  /// through Module::replace_module.
  static std::shared_ptr<nn::Module> convert_sync_batchnorm(
      std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> process_group = nullptr);

 protected:
  std::shared_ptr<nn::Module> clone_impl() const override;

 private:
  std::shared_ptr<ProcessGroup> group_;
};

}  // namespace ember::distributed
