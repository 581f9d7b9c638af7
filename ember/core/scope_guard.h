// Runs a function when a scope ends, by return or by exception: how ember puts back a setting it
// changed for a while, or releases what it took (absl::Cleanup, c10::make_scope_exit).
#pragma once

#include <utility>

namespace ember {

/// Calls `f` when destroyed. `f` must not throw: it may run while an exception unwinds the stack.
///   bool saved = t_flag;
///   t_flag = true;
///   ScopeGuard restore([&] { t_flag = saved; });
template <typename F>
class [[nodiscard]] ScopeGuard {
 public:
  explicit ScopeGuard(F f) : f_(std::move(f)) {}
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
  ~ScopeGuard() { f_(); }

 private:
  F f_;
};

}  // namespace ember
