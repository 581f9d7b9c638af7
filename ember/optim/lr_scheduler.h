// Learning-rate schedules: StepLR and CosineAnnealingLR (closed forms, as
// torch.optim.lr_scheduler).
#pragma once

#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  /// Advances one epoch and sets the optimizer's learning rates.
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  /// The learning rate of a group whose initial rate was `base` at `epoch`.
  virtual double lr_at(double base, int64_t epoch) const = 0;

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = 0;
};

class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(double base, int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0);

 protected:
  double lr_at(double base, int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace ember::optim
