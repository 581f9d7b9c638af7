#include "ember/optim/lr_scheduler.h"

#include <cmath>

namespace ember::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const ParamGroup& g : optimizer.param_groups()) base_lrs_.push_back(g.options.at("lr"));
  last_lr_ = base_lrs_;
}

void LRScheduler::step() {
  ++last_epoch_;
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i) {
    last_lr_[i] = lr_at(base_lrs_[i], last_epoch_);
    groups[i].options["lr"] = last_lr_[i];
  }
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "[StepLR] step_size must be positive, got ", step_size);
}
double StepLR::lr_at(double base, int64_t epoch) const {
  return base * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  EMBER_CHECK(t_max > 0, "[CosineAnnealingLR] T_max must be positive, got ", t_max);
}
double CosineAnnealingLR::lr_at(double base, int64_t epoch) const {
  const double pi = 3.14159265358979323846;
  return eta_min_ +
         (base - eta_min_) * (1 + std::cos(pi * static_cast<double>(epoch) / t_max_)) / 2;
}

}  // namespace ember::optim
