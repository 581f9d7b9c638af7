#include "ember/amp/grad_scaler.h"

#include <cmath>

#include "ember/core/grad_mode.h"
#include "ember/ops/copy.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/reduce.h"

namespace ember::amp {

namespace {
void check_factors(double growth, double backoff) {
  EMBER_CHECK(growth > 1.0, "[GradScaler] the growth factor must be > 1.0, got ", growth);
  EMBER_CHECK(backoff < 1.0, "[GradScaler] the backoff factor must be < 1.0, got ", backoff);
}
}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  if (options_.enabled) {
    check_factors(options_.growth_factor, options_.backoff_factor);
    EMBER_CHECK(options_.growth_interval > 0, "[GradScaler] growth_interval must be positive, got ",
                options_.growth_interval);
  }
}

Tensor GradScaler::scale(const Tensor& outputs) {
  if (!options_.enabled) return outputs;
  EMBER_CHECK(outputs.defined(), "[GradScaler.scale] outputs is an undefined tensor");
  if (!scale_.defined())
    scale_ = full({1}, options_.init_scale, TensorOptions(kFloat32).with_device(outputs.device()));
  return outputs * (scale_.device() == outputs.device() ? scale_ : scale_.to(outputs.device()));
}

std::vector<Tensor> GradScaler::scale(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> out;
  out.reserve(outputs.size());
  for (const Tensor& t : outputs) out.push_back(scale(t));
  return out;
}

void GradScaler::check_initialized(const char* op) const {
  EMBER_CHECK(scale_.defined(), "[GradScaler.", op,
              "] the scale is not initialized: call scaler.scale(loss) earlier in the iteration");
}

std::vector<Tensor> GradScaler::params_of(const optim::Optimizer& optimizer) {
  std::vector<Tensor> out;
  for (const optim::ParamGroup& group : optimizer.param_groups())
    out.insert(out.end(), group.params.begin(), group.params.end());
  return out;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  unscale_(&optimizer, params_of(optimizer));
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  return step(&optimizer, params_of(optimizer), [&] { optimizer.step(); });
}

void GradScaler::unscale_(const void* key, const std::vector<Tensor>& params) {
  if (!options_.enabled) return;
  check_initialized("unscale_");
  PerOptimizer& s = per_optimizer_[key];
  EMBER_CHECK(s.stage != Stage::Unscaled,
              "[GradScaler.unscale_] unscale_() has already been called on this optimizer since "
              "the last update()");
  EMBER_CHECK(s.stage != Stage::Stepped,
              "[GradScaler.unscale_] unscale_() is being called after step()");
  // As PyTorch: 1/scale in double, then float32; the check reads each gradient before it is
  // multiplied, and a gradient with an inf or NaN is multiplied all the same.
  const float inv_scale = static_cast<float>(1.0 / get_scale());
  NoGradGuard no_grad;
  for (Tensor p : params) {
      Tensor& g = p.mutable_grad();
      if (!g.defined()) continue;
      EMBER_CHECK(g.dtype() != kFloat16,
                  "[GradScaler.unscale_] attempting to unscale float16 gradients (keep the "
                  "parameters in float32 and let autocast cast them)");
      Tensor& found = s.found_inf[g.device()];
      if (!found.defined()) found = zeros({1}, TensorOptions(kFloat32).with_device(g.device()));
      found = maximum(found, logical_not(all(isfinite(g))).to(kFloat32));
      if (inv_scale != 1.0f) g.mul_(inv_scale);
    }
  s.stage = Stage::Unscaled;
}

bool GradScaler::any_found(const PerOptimizer& s) {
  for (const auto& [device, found] : s.found_inf)
    if (found.item<double>() != 0) return true;
  return false;
}

bool GradScaler::step(const void* key, const std::vector<Tensor>& params,
                      const std::function<void()>& do_step) {
  if (!options_.enabled) {
    do_step();
    return true;
  }
  check_initialized("step");
  PerOptimizer& s = per_optimizer_[key];
  EMBER_CHECK(s.stage != Stage::Stepped,
              "[GradScaler.step] step() has already been called since the last update()");
  if (s.stage == Stage::Ready) unscale_(key, params);
  EMBER_CHECK(!s.found_inf.empty(),
              "[GradScaler.step] no inf checks were recorded for this optimizer (none of its "
              "parameters has a gradient)");
  bool clean = !any_found(s);
  if (clean) do_step();
  s.stage = Stage::Stepped;
  return clean;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!options_.enabled) return;
  check_initialized("update");
  if (new_scale) {
    scale_.fill_(*new_scale);
  } else {
    bool recorded = false, found = false;
    for (const auto& [opt, s] : per_optimizer_) {
      recorded = recorded || !s.found_inf.empty();
      found = found || any_found(s);
    }
    EMBER_CHECK(recorded, "[GradScaler.update] no inf checks were recorded prior to update()");
    // PyTorch's _amp_update_scale_ kernel, in float32 like its scale tensor.
    float current = static_cast<float>(get_scale());
    if (found) {
      current *= static_cast<float>(options_.backoff_factor);
      growth_tracker_ = 0;
    } else if (growth_tracker_ + 1 == options_.growth_interval) {
      float grown = current * static_cast<float>(options_.growth_factor);
      if (std::isfinite(grown)) current = grown;
      growth_tracker_ = 0;
    } else {
      ++growth_tracker_;
    }
    scale_.fill_(current);
  }
  per_optimizer_.clear();
}

double GradScaler::get_scale() const {
  if (!options_.enabled) return 1.0;
  return scale_.defined() ? scale_.item<double>() : options_.init_scale;
}

void GradScaler::set_growth_factor(double v) {
  check_factors(v, options_.backoff_factor);
  options_.growth_factor = v;
}
void GradScaler::set_backoff_factor(double v) {
  check_factors(options_.growth_factor, v);
  options_.backoff_factor = v;
}
void GradScaler::set_growth_interval(int64_t v) {
  EMBER_CHECK(v > 0, "[GradScaler] growth_interval must be positive, got ", v);
  options_.growth_interval = v;
}

nn::NamedTensors GradScaler::state_dict() const {
  if (!options_.enabled) return {};
  auto number = [](double v) { return scalar_tensor(v, kFloat64); };
  return {{"scale", number(get_scale())},
          {"growth_factor", number(options_.growth_factor)},
          {"backoff_factor", number(options_.backoff_factor)},
          {"growth_interval", number(static_cast<double>(options_.growth_interval))},
          {"_growth_tracker", number(static_cast<double>(growth_tracker_))}};
}

void GradScaler::load_state_dict(const nn::NamedTensors& state) {
  if (!options_.enabled) return;
  EMBER_CHECK(!state.empty(),
              "[GradScaler.load_state_dict] the source state dict is empty, possibly because it "
              "was saved from a disabled GradScaler");
  std::map<std::string, double> v;
  for (const auto& [key, t] : state) {
    EMBER_CHECK(t.defined() && t.numel() == 1, "[GradScaler.load_state_dict] ", key,
                " must hold one number");
    v[key] = t.item<double>();
  }
  for (const char* key :
       {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"})
    EMBER_CHECK(v.count(key), "[GradScaler.load_state_dict] missing key '", key, "'");
  EMBER_CHECK(v.size() == 5,
              "[GradScaler.load_state_dict] expected exactly the keys scale, "
              "growth_factor, backoff_factor, growth_interval, _growth_tracker; got ",
              v.size(), " keys");
  check_factors(v["growth_factor"], v["backoff_factor"]);
  EMBER_CHECK(v["growth_interval"] >= 1,
              "[GradScaler.load_state_dict] growth_interval must be "
              "positive, got ",
              v["growth_interval"]);
  options_.init_scale = v["scale"];
  options_.growth_factor = v["growth_factor"];
  options_.backoff_factor = v["backoff_factor"];
  options_.growth_interval = static_cast<int64_t>(v["growth_interval"]);
  growth_tracker_ = static_cast<int64_t>(v["_growth_tracker"]);
  if (scale_.defined()) scale_.fill_(options_.init_scale);
}

}  // namespace ember::amp
