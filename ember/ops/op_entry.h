// The one line every public op starts with: EMBER_OP(op, args...), where `op` names the op's row
// in ops/ops.def (Note [The op list]), which gives its autocast policy. It is where anything that
// wants to see every op attaches (autocast's casts, the profiler's record, a capture; later,
// fusion), so that no op grows a line per feature.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/autograd_meta.h"
#include "ember/core/profiler_events.h"
#include "ember/core/thread_local_state.h"
#include "ember/ops/autocast.h"
#include "ember/ops/capture.h"
#include "ember/ops/op_registry.h"

namespace ember::detail {

// Note [The op entry]
// With nothing switched on (no autocast, no profiler, no capture) the line costs a few loads of
// one thread-local struct and a branch. Otherwise it calls enter_op, which records the call for a
// capture (Note [Capture at the op entry]), opens the profiler's record, applies autocast's policy,
// and calls the op again; the op's own entry line then lets
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
  return s.profiler != nullptr || s.capture != nullptr || s.autocast.enabled[0] ||
         s.autocast.enabled[1];
}

/// How many captured ops are running on this thread (Note [Capture at the op entry]).
inline thread_local int t_capture_depth = 0;

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

// The tensors among an op's arguments or results, for a capture.
inline void collect_tensors(std::vector<Tensor>& out, const Tensor& t) { out.push_back(t); }
inline void collect_tensors(std::vector<Tensor>& out, const std::vector<Tensor>& ts) {
  out.insert(out.end(), ts.begin(), ts.end());
}
template <typename... T>
void collect_tensors(std::vector<Tensor>& out, const std::tuple<T...>& t) {
  std::apply([&out](const auto&... x) { (collect_tensors(out, x), ...); }, t);
}
template <typename T>
void collect_tensors(std::vector<Tensor>&, const T&) {}

// An argument as a replay keeps it (Note [Capture at the op entry]): a tensor is a slot the
// replay's inputs fill, in collect_tensors' order, so that the record does not hold it twice; a
// view of the caller's characters becomes an owned copy; anything else is copied.
struct TensorSlot {};
struct TensorListSlot {
  size_t n;
};
struct KeptCString {
  std::string s;
  bool null;
};
template <typename T>
auto keep_arg(const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>)
    return TensorSlot{};
  else if constexpr (std::is_same_v<D, std::vector<Tensor>>)
    return TensorListSlot{v.size()};
  else if constexpr (std::is_same_v<D, std::string_view>)
    return std::string(v);
  else if constexpr (std::is_same_v<D, const char*>)
    return KeptCString{v ? std::string(v) : std::string(), v == nullptr};
  else
    return D(v);
}
inline Tensor replay_arg(TensorSlot, const std::vector<Tensor>& in, size_t& k) { return in.at(k++); }
inline std::vector<Tensor> replay_arg(TensorListSlot s, const std::vector<Tensor>& in, size_t& k) {
  if (k + s.n > in.size()) throw std::out_of_range("replay: fewer tensors than the op was given");
  std::vector<Tensor> v(in.begin() + static_cast<std::ptrdiff_t>(k),
                        in.begin() + static_cast<std::ptrdiff_t>(k + s.n));
  k += s.n;
  return v;
}
inline const char* replay_arg(const KeptCString& c, const std::vector<Tensor>&, size_t&) {
  return c.null ? nullptr : c.s.c_str();
}
template <typename T>
const T& replay_arg(const T& kept, const std::vector<Tensor>&, size_t&) {
  return kept;
}

/// The op called again with other tensors (CapturedOp::replay), or nothing where an argument
/// cannot be copied.
template <typename Op, typename... Args>
OpReplay make_replay(Op op, const Args&... args) {
  if constexpr (!(std::is_copy_constructible_v<decltype(keep_arg(args))> && ...)) {
    return {};
  } else {
    return [op, kept = std::make_tuple(keep_arg(args)...)](const std::vector<Tensor>& in) {
      return std::apply(
          [&](const auto&... k) {
            size_t next = 0;
            // Braces: the slots are filled left to right.
            std::tuple<std::decay_t<decltype(replay_arg(k, in, next))>...> given{
                replay_arg(k, in, next)...};
            return std::apply(
                [&](auto&... g) {
                  std::vector<Tensor> out;
                  if constexpr (std::is_void_v<decltype(op(g...))>) {
                    op(g...);
                  } else {
                    decltype(auto) r = op(g...);
                    collect_tensors(out, r);
                  }
                  return out;
                },
                given);
          },
          kept);
    };
  }
}

// The profiler's record and autocast's casts. The op's arguments are its parameters, passed on as
// they came (in-place ops take Tensor&).
template <OpId kId, typename Op, typename... Args>
decltype(auto) enter_op_hooks(Op op, Args&&... args) {
  profiler::RecordScope scope(profiler::EventKind::Op, op_name(kId));
  if (scope.active()) record_inputs(scope, args...);
  if constexpr (op_policy(kId).listed) {
    if (amp::detail::active())
      return amp::detail::run(
          op_policy(kId),
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

// The capture's record around the rest (Note [Capture at the op entry]).
template <OpId kId, typename Op, typename... Args>
decltype(auto) enter_op_captured(OpCapture& capture, Op op, Args&&... args) {
  std::vector<Tensor> inputs;
  (collect_tensors(inputs, args), ...);
  size_t index =
      capture.begin(kId, std::move(inputs), t_capture_depth, make_replay(op, args...));
  struct Depth {
    Depth() { ++t_capture_depth; }
    ~Depth() { --t_capture_depth; }
  } depth;
  using R = decltype(enter_op_hooks<kId>(op, std::forward<Args>(args)...));
  if constexpr (std::is_void_v<R>) {
    enter_op_hooks<kId>(op, std::forward<Args>(args)...);
    capture.end(index, {});
  } else {
    decltype(auto) result = enter_op_hooks<kId>(op, std::forward<Args>(args)...);
    std::vector<Tensor> outputs;
    collect_tensors(outputs, result);
    capture.end(index, std::move(outputs));
    return static_cast<R>(result);
  }
}

template <OpId kId, typename Op, typename... Args>
decltype(auto) enter_op(Op op, Args&&... args) {
  if (OpCapture* capture = t_local_state.capture)
    return enter_op_captured<kId>(*capture, op, std::forward<Args>(args)...);
  return enter_op_hooks<kId>(op, std::forward<Args>(args)...);
}

}  // namespace ember::detail

/// The first line of an op: see Note [The op entry]. `op` is both the function to call again and
/// the op's id (op_id::op, from ops/ops.def, in the namespace the line is written in).
#define EMBER_OP(op, ...)                                                        \
  if (::ember::detail::op_hooks_active() && !::ember::detail::take_op_entered()) \
  return ::ember::detail::enter_op<op_id::op>(                                   \
      [](auto&&... args_) -> decltype(auto) {                                    \
        return op(std::forward<decltype(args_)>(args_)...);                      \
      },                                                                         \
      __VA_ARGS__)

/// The first line of a Tensor method that is an op of its own (the views: view, transpose, t,
/// ...; the in-place ops: add_, copy_, ...), as PyTorch records aten::view and aten::add_.
#define EMBER_OP_METHOD(op, ...)                                                 \
  if (::ember::detail::op_hooks_active() && !::ember::detail::take_op_entered()) \
  return ::ember::detail::enter_op<::ember::op_id::op>(                          \
      [](auto& self_, auto&&... args_) -> decltype(auto) {                       \
        return self_.op(std::forward<decltype(args_)>(args_)...);                \
      },                                                                         \
      *this __VA_OPT__(, ) __VA_ARGS__)
