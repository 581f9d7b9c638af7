// Whether ops record the autograd graph (per thread), and the guards that switch it off.
#pragma once

#include "ember/core/thread_local_state.h"

namespace ember {

/// Kept in this thread's ThreadLocalState, so threads ember starts for the caller inherit it.
struct GradMode {
  static bool is_enabled() { return detail::t_local_state.grad_enabled; }
  static void set_enabled(bool enabled) { detail::t_local_state.grad_enabled = enabled; }
};

/// Disables graph recording in its scope (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// Enables or disables graph recording in its scope (torch.set_grad_enabled / enable_grad).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

/// torch.inference_mode(): no graph recording, and no version bookkeeping for saved tensors.
/// ember's inference mode is no-grad mode; tensors made in it can later be used with autograd.
class InferenceMode : public NoGradGuard {};

}  // namespace ember
