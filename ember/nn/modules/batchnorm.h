// nn::BatchNorm1d, 2d and 3d: batch statistics in training, running ones in evaluation.
#pragma once

#include "ember/nn/module.h"

namespace ember::nn {

class BatchNorm : public Module {
 public:
  /// `dims`: the input dims the layer accepts (BatchNorm1d: 2 or 3, BatchNorm2d: 4, 3d: 5).
  BatchNorm(int64_t num_features, double eps, double momentum, bool affine,
            bool track_running_stats, std::vector<int64_t> dims);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  void reset_parameters();
  void reset_running_stats();

  const int64_t num_features;
  const double eps, momentum;
  const bool affine, track_running_stats;
  Tensor& weight;
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;  // int64 scalar

 private:
  std::vector<int64_t> dims_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm(num_features, eps, momentum, affine, track_running_stats, {2, 3}) {}
  std::string name() const override { return "BatchNorm1d"; }

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm(num_features, eps, momentum, affine, track_running_stats, {4}) {}
  std::string name() const override { return "BatchNorm2d"; }

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

class BatchNorm3d : public BatchNorm {
 public:
  explicit BatchNorm3d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm(num_features, eps, momentum, affine, track_running_stats, {5}) {}
  std::string name() const override { return "BatchNorm3d"; }

 protected:
  std::shared_ptr<Module> clone_impl() const override;
};

}  // namespace ember::nn
