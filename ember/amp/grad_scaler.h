// Loss scaling for float16 training (torch.cuda.amp.GradScaler): gradients of a loss multiplied
// by a large factor do not underflow in float16; they are divided back before the optimizer
// steps, a step whose gradients hold an inf or NaN is skipped, and the factor backs off after
// such a step and grows after `growth_interval` clean ones.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::amp {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // a disabled scaler passes everything through (for one code path)
  GradScalerOptions& with_init_scale(double v) {
    init_scale = v;
    return *this;
  }
  GradScalerOptions& with_growth_factor(double v) {
    growth_factor = v;
    return *this;
  }
  GradScalerOptions& with_backoff_factor(double v) {
    backoff_factor = v;
    return *this;
  }
  GradScalerOptions& with_growth_interval(int64_t v) {
    growth_interval = v;
    return *this;
  }
  GradScalerOptions& with_enabled(bool v) {
    enabled = v;
    return *this;
  }
};

/// The usual iteration, with any optimizer, under DDP too (its all-reduce averages the scaled
/// gradients, which unscale the same way):
///   { amp::autocast guard(kCUDA);  loss = loss_fn(model->forward(x), y); }
///   scaler.scale(loss).backward();
///   scaler.step(opt);     // unscales (unless unscale_ was called), skips the step on inf/NaN
///   scaler.update();      // backs off or grows the scale
/// For gradient accumulation, scale every micro-batch's loss and step and update once. To clip
/// gradients, call unscale_(opt) first, then clip, then step.
class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  /// outputs * scale (the scale is a float32 tensor of shape [1] on the outputs' device, so a
  /// 16-bit loss becomes a float32 one, as in PyTorch).
  Tensor scale(const Tensor& outputs);
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs);
  /// Divides the optimizer's gradients by the scale in place and records whether any is inf or
  /// NaN. At most once per optimizer between updates, and not after step().
  void unscale_(optim::Optimizer& optimizer);
  /// unscale_ if not done yet, then optimizer.step() unless a gradient was inf or NaN. Returns
  /// whether the optimizer stepped.
  bool step(optim::Optimizer& optimizer);
  /// The same for an optimizer ember does not own (a Python one): `key` identifies it between
  /// calls, `params` are its parameters and `do_step` steps it.
  void unscale_(const void* key, const std::vector<Tensor>& params);
  bool step(const void* key, const std::vector<Tensor>& params,
            const std::function<void()>& do_step);
  /// Backs the scale off (times backoff_factor) if any optimizer saw an inf or NaN since the last
  /// update, else grows it (times growth_factor) after growth_interval clean updates in a row.
  /// `new_scale` sets it instead.
  void update(std::optional<double> new_scale = std::nullopt);

  /// The current scale (1 when disabled).
  double get_scale() const;
  double get_growth_factor() const { return options_.growth_factor; }
  void set_growth_factor(double v);
  double get_backoff_factor() const { return options_.backoff_factor; }
  void set_backoff_factor(double v);
  int64_t get_growth_interval() const { return options_.growth_interval; }
  void set_growth_interval(int64_t v);
  bool is_enabled() const { return options_.enabled; }

  /// "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" as float64
  /// scalars (PyTorch's keys); empty when disabled.
  nn::NamedTensors state_dict() const;
  void load_state_dict(const nn::NamedTensors& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    std::unordered_map<Device, Tensor>
        found_inf;  // float32 [1] per device: 1 if a gradient was inf/NaN
  };
  void check_initialized(const char* op) const;
  static std::vector<Tensor> params_of(const optim::Optimizer& optimizer);
  static bool any_found(const PerOptimizer& s);

  GradScalerOptions options_;
  Tensor scale_;                // float32 [1], made on the device of the first scale() call
  int64_t growth_tracker_ = 0;  // clean updates in a row since the last change of scale
  std::map<const void*, PerOptimizer> per_optimizer_;
};

}  // namespace ember::amp
