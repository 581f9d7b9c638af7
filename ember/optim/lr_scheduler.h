// Learning-rate schedules: StepLR and CosineAnnealingLR (closed forms, as
// torch.optim.lr_scheduler).
#pragma once

#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// A schedule computes each group's rate from the group's "initial_lr", which the first scheduler
/// records in the group (so it is saved with the optimizer's state dict). To resume, load the
/// optimizer's state, then make the scheduler with `last_epoch` = the epochs already done, or load
/// the scheduler's own state dict.
class LRScheduler {
 public:
  /// `last_epoch` -1 starts a schedule; N >= 0 resumes after N epochs.
  explicit LRScheduler(Optimizer& optimizer, int64_t last_epoch = -1);
  virtual ~LRScheduler() = default;
  /// Advances one epoch and sets the optimizer's learning rates.
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  /// "last_epoch" and "base_lrs.<group>".
  nn::NamedTensors state_dict() const;
  /// Restores the epoch and base rates and sets the optimizer's rates to that epoch's.
  void load_state_dict(const nn::NamedTensors& state);

 protected:
  /// The learning rate of a group whose initial rate was `base` at `epoch`.
  virtual double lr_at(double base, int64_t epoch) const = 0;
  /// Sets the optimizer's rates to the current epoch's; a schedule's constructor ends with it (the
  /// base's cannot: lr_at is not callable there).
  void apply_epoch();

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = 0;
};

class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  double lr_at(double base, int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0,
                    int64_t last_epoch = -1);

 protected:
  double lr_at(double base, int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace ember::optim
