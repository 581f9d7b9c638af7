// The optimizer base: parameter groups with their hyperparameters, per-parameter state, and a
// state dict of tensors (so a checkpoint is one safetensors file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::optim {

/// Parameters sharing hyperparameters ("lr", "momentum", ...).
struct ParamGroup {
  std::vector<Tensor> params;
  std::map<std::string, double> options;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// Updates every parameter that has a gradient.
  virtual void step() = 0;
  void zero_grad(bool set_to_none = true);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  void add_param_group(ParamGroup group);
  /// The learning rate of every group (schedulers set it).
  void set_lr(double lr);
  double lr(size_t group = 0) const;

  /// "state.<i>.<name>" for each parameter's state (i counts parameters across groups) and
  /// "param_groups.<g>.<option>" as float64 scalars.
  nn::NamedTensors state_dict() const;
  /// Restores state_dict(); the parameter count and every tensor shape must match.
  void load_state_dict(const nn::NamedTensors& state);

 protected:
  Optimizer(std::vector<ParamGroup> groups, std::map<std::string, double> defaults);
  /// The state of parameter p (momentum buffers, Adam moments), created empty on first use.
  std::map<std::string, Tensor>& state(const Tensor& p);

 private:
  std::vector<ParamGroup> groups_;
  std::map<std::string, double> defaults_;
  std::map<const TensorImpl*, std::map<std::string, Tensor>> state_;
};

}  // namespace ember::optim
