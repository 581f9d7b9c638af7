#include "ember/nn/modules/batchnorm.h"

#include <algorithm>
#include <sstream>

#include "ember/core/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops/factory.h"

namespace ember::nn {

BatchNorm::BatchNorm(int64_t n, double eps_, double momentum_, bool affine_, bool track,
                     std::vector<int64_t> dims)
    : num_features(n),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track),
      weight(register_parameter("weight", affine_ ? uninitialized({n}) : Tensor())),
      bias(register_parameter("bias", affine_ ? uninitialized({n}) : Tensor())),
      running_mean(register_buffer("running_mean", track ? zeros({n}) : Tensor())),
      running_var(register_buffer("running_var", track ? ones({n}) : Tensor())),
      num_batches_tracked(
          register_buffer("num_batches_tracked", track ? scalar_tensor(0, kInt64) : Tensor())),
      dims_(std::move(dims)) {
  if (should_initialize()) reset_parameters();
}

void BatchNorm::reset_running_stats() {
  if (!track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNorm::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm::forward(const Tensor& x) {
  EMBER_CHECK(std::find(dims_.begin(), dims_.end(), x.dim()) != dims_.end(), "[", name(),
              "] expected ", dims_.size() == 1 ? "4D" : "2D or 3D", " input (got ", x.dim(),
              "D input of shape ", x.sizes(), ")");
  EMBER_CHECK(x.size(1) == num_features, "[", name(), "] expected ", num_features,
              " channels in dim 1, got input of shape ", x.sizes());
  bool use_batch_stats = is_training() || !track_running_stats;
  if (is_training() && track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return functional::batch_norm(x, use_batch_stats && !is_training() ? Tensor() : running_mean,
                                use_batch_stats && !is_training() ? Tensor() : running_var, weight,
                                bias, use_batch_stats, momentum, eps);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << num_features << ", eps=" << eps << ", momentum=" << momentum
     << ", affine=" << (affine ? "True" : "False")
     << ", track_running_stats=" << (track_running_stats ? "True" : "False");
  return os.str();
}

std::shared_ptr<Module> BatchNorm1d::clone_impl() const {
  return std::make_shared<BatchNorm1d>(num_features, eps, momentum, affine, track_running_stats);
}
std::shared_ptr<Module> BatchNorm2d::clone_impl() const {
  return std::make_shared<BatchNorm2d>(num_features, eps, momentum, affine, track_running_stats);
}
std::shared_ptr<Module> BatchNorm3d::clone_impl() const {
  return std::make_shared<BatchNorm3d>(num_features, eps, momentum, affine, track_running_stats);
}

}  // namespace ember::nn
