// The one line every public op starts with: EMBER_OP(op, args...), or EMBER_OP_CAST(policy, op,
// args...) for the ops on autocast's lists. It is where anything that wants to see every op
// attaches (autocast's casts, the profiler's record; later, capture or fusion), so that no op
// grows a line per feature.
#pragma once

#include <utility>

#include "ember/core/autograd_meta.h"
#include "ember/core/profiler_events.h"
#include "ember/core/thread_local_state.h"
#include "ember/ops/autocast.h"

namespace ember::detail {

// Note [The op entry]
// With nothing switched on (no autocast, no profiler) the line costs a few loads of one
// thread-local struct and a branch. Otherwise it calls enter_op, which opens the profiler's
// record, applies autocast's policy, and calls the op again; the op's own entry line then lets
// it through once (t_op_entered), so that the ops it is made of (linear of addmm) are entered, and
// recorded, in their turn, as nested events. Autocast is switched off inside an op on its lists
// (Note [Autocast at the op entry]) and stays on inside the others, so a composite op that is not
// listed (multi_head_attention_forward) still has its linears cast.

/// The op's next entry line is its own call from enter_op: let it through once. Set only when
/// that line will look (autocast switched off inside a listed op may leave nothing on), so that
/// a pass is never left over for another op.
inline thread_local bool t_op_entered = false;

/// Whether anything wants to see ops on this thread.
inline bool op_hooks_active() {
  const LocalState& s = t_local_state;
  return s.profiler != nullptr || s.autocast.enabled[0] || s.autocast.enabled[1];
}

/// Takes the pass that enter_op left for the op's own entry line.
inline bool take_op_entered() { return std::exchange(t_op_entered, false); }

/// PyTorch's sequence number of the op's autograd node: the next node made on this process, read
/// before the op makes it; its backward event carries the same number.
inline int64_t peek_sequence_nr() { return static_cast<int64_t>(Node::peek_sequence_nr()); }

inline void describe_arg(std::string& shapes, std::string& dtypes, const Tensor& t) {
  if (!shapes.empty()) {
    shapes += ", ";
    dtypes += ", ";
  }
  if (!t.defined()) {
    shapes += "[]";
    dtypes += "undefined";
    return;
  }
  shapes += "[";
  for (int64_t i = 0; i < t.dim(); ++i) shapes += (i ? ", " : "") + std::to_string(t.size(i));
  shapes += "]";
  dtypes += dtype_name(t.dtype());
}
inline void describe_arg(std::string& shapes, std::string& dtypes, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) describe_arg(shapes, dtypes, t);
}
template <typename T>
void describe_arg(std::string&, std::string&, const T&) {}

template <typename... Args>
void record_inputs(profiler::RecordScope& scope, const Args&... args) {
  profiler::Event& e = scope.event();
  e.sequence_nr = peek_sequence_nr();
  const Tensor* first = amp::detail::first_tensor(args...);
  if (first) e.device = first->device();
  if (!scope.record_shapes()) return;
  std::string shapes, dtypes;
  (describe_arg(shapes, dtypes, args), ...);
  e.shapes = "[" + shapes + "]";
  e.dtypes = "[" + dtypes + "]";
}

/// A policy for ops that are not on autocast's lists: nothing is cast and autocast stays on
/// inside.
inline constexpr amp::detail::Policy kNotListed{amp::detail::Cast::None, amp::detail::Cast::None};

// The op's arguments are its parameters, passed on as they came (in-place ops take Tensor&).
template <bool kListed, typename Op, typename... Args>
decltype(auto) enter_op(const char* name, amp::detail::Policy policy, Op op, Args&&... args) {
  profiler::RecordScope scope(profiler::EventKind::Op, name);
  if (scope.active()) record_inputs(scope, args...);
  if constexpr (kListed) {
    if (amp::detail::active())
      return amp::detail::run(
          policy,
          [&op](const auto&... cast) -> decltype(auto) {
            // After the casts, which are ops too; and only if the op's line will look for it.
            t_op_entered = op_hooks_active();
            return op(cast...);
          },
          args...);
  }
  t_op_entered = true;  // the hooks are still on: the op's line looks for it
  return op(std::forward<Args>(args)...);
}

}  // namespace ember::detail

/// The first line of an op not on autocast's lists: see Note [The op entry].
#define EMBER_OP(op, ...)                                                        \
  if (::ember::detail::op_hooks_active() && !::ember::detail::take_op_entered()) \
  return ::ember::detail::enter_op<false>(                                       \
      #op, ::ember::detail::kNotListed,                                          \
      [](auto&&... args_) -> decltype(auto) {                                    \
        return op(std::forward<decltype(args_)>(args_)...);                      \
      },                                                                         \
      __VA_ARGS__)

/// The first line of a Tensor method that is an op of its own (the views: view, transpose, t,
/// ...), for the profiler as PyTorch records aten::view; never on autocast's lists.
#define EMBER_OP_METHOD(op, ...)                                                 \
  if (::ember::detail::op_hooks_active() && !::ember::detail::take_op_entered()) \
  return ::ember::detail::enter_op<false>(                                       \
      #op, ::ember::detail::kNotListed,                                          \
      [](const ::ember::Tensor& self_, auto&&... args_) -> decltype(auto) {      \
        return self_.op(std::forward<decltype(args_)>(args_)...);                \
      },                                                                         \
      *this __VA_OPT__(, ) __VA_ARGS__)

/// The first line of an op on autocast's lists (ops/autocast.h's policies): see Note [The op
/// entry] and Note [Autocast at the op entry].
#define EMBER_OP_CAST(policy, op, ...)                                           \
  if (::ember::detail::op_hooks_active() && !::ember::detail::take_op_entered()) \
  return ::ember::detail::enter_op<true>(                                        \
      #op, ::ember::amp::detail::policy,                                         \
      [](const auto&... args_) -> decltype(auto) { return op(args_...); }, __VA_ARGS__)
