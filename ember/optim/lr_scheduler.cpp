#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "ember/ops/factory.h"

namespace ember::optim {

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch) : optimizer_(optimizer) {
  EMBER_CHECK(last_epoch >= -1,
              "[LRScheduler] last_epoch must be -1 (start) or the epochs done, got ", last_epoch);
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& options = groups[i].options;
    if (last_epoch == -1) options["initial_lr"] = options.at("lr");
    EMBER_CHECK(options.count("initial_lr"), "[LRScheduler] param_groups[", i,
                "] has no initial_lr to resume from (last_epoch ", last_epoch,
                "): load the optimizer's state dict saved with its scheduler first");
    base_lrs_.push_back(options.at("initial_lr"));
  }
  last_epoch_ = std::max<int64_t>(last_epoch, 0);
  last_lr_ = base_lrs_;
}

void LRScheduler::step() {
  ++last_epoch_;
  apply_epoch();
}

void LRScheduler::apply_epoch() {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i) {
    last_lr_[i] = lr_at(base_lrs_[i], last_epoch_);
    groups[i].options["lr"] = last_lr_[i];
  }
}

nn::NamedTensors LRScheduler::state_dict() const {
  nn::NamedTensors out{{"last_epoch", scalar_tensor(last_epoch_, kInt64)}};
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    out.emplace_back("base_lrs." + std::to_string(i), scalar_tensor(base_lrs_[i], kFloat64));
  return out;
}

void LRScheduler::load_state_dict(const nn::NamedTensors& state) {
  std::optional<int64_t> epoch;
  std::vector<double> bases(base_lrs_.size());
  std::vector<bool> found(base_lrs_.size());
  for (auto& [key, t] : state) {
    EMBER_CHECK(t.defined() && t.numel() == 1, "[LRScheduler.load_state_dict] ", key,
                " must hold one number");
    size_t group = 0;
    if (key == "last_epoch") {
      epoch = t.item<int64_t>();
      continue;
    }
    bool ok = key.rfind("base_lrs.", 0) == 0 && key.size() > 9 && key.size() <= 18 &&
              key.find_first_not_of("0123456789", 9) == std::string::npos;
    if (ok) group = std::stoul(key.substr(9));
    EMBER_CHECK(ok && group < bases.size(), "[LRScheduler.load_state_dict] unexpected key '", key,
                "' (the optimizer has ", bases.size(), " groups)");
    bases[group] = t.item<double>();
    found[group] = true;
  }
  EMBER_CHECK(epoch && *epoch >= 0, "[LRScheduler.load_state_dict] missing or negative last_epoch");
  for (size_t i = 0; i < found.size(); ++i)
    EMBER_CHECK(found[i], "[LRScheduler.load_state_dict] missing base_lrs.", i);
  last_epoch_ = *epoch;
  base_lrs_ = bases;
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i)
    groups[i].options["initial_lr"] = base_lrs_[i];
  apply_epoch();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "[StepLR] step_size must be positive, got ", step_size);
  apply_epoch();
}
double StepLR::lr_at(double base, int64_t epoch) const {
  return base * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min,
                                     int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), t_max_(t_max), eta_min_(eta_min) {
  EMBER_CHECK(t_max > 0, "[CosineAnnealingLR] T_max must be positive, got ", t_max);
  apply_epoch();
}
double CosineAnnealingLR::lr_at(double base, int64_t epoch) const {
  const double pi = 3.14159265358979323846;
  return eta_min_ +
         (base - eta_min_) * (1 + std::cos(pi * static_cast<double>(epoch) / t_max_)) / 2;
}

}  // namespace ember::optim
