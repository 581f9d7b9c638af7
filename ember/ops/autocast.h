// Autocast at the op entry: PyTorch's op lists and what the op entry (ops/op_entry.h) does for the
// ops on them.
// The settings themselves (the guard, per-thread state, the weight cache) are in core/autocast.h.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "ember/core/autocast.h"

namespace ember::amp::detail {

// Note [Autocast at the op entry]
// An op on one of the lists has its policy in its row of ops/ops.def, which its entry line reads
// (ops/op_entry.h, Note [The op entry]). When autocast is on for its tensors' device, the line
// casts the arguments as the policy says and calls the op again with autocast switched off for the
// rest of the call, so that the ops it is made of (linear of addmm, cross_entropy of log_softmax
// and nll_loss) do not cast a second time, as PyTorch's autocast kernels do by excluding their
// dispatch key. Casts go through Tensor::to, so autograd sees them: gradients come back in the
// inputs' dtypes.

/// What an op does with its floating arguments on one device type.
enum class Cast : uint8_t {
  None,          // nothing (ops made of listed ops, but a single kernel in PyTorch)
  Lower,         // to the autocast dtype (lower_precision_fp)
  Float32,       // to float32 (fp32)
  Float32Dtype,  // dtype argument float32 unless given (fp32_set_opt_dtype)
  Promote,       // to the widest floating dtype among them (promote)
};
/// An op's policy on the CPU and on CUDA.
struct Policy {
  Cast cpu, cuda;
  bool listed = true;  // on one of the lists: autocast is off inside the op
};

// PyTorch 1.13's lists (aten/src/ATen/autocast_mode.cpp) for the ops ember has. float64 and
// non-floating arguments are never cast. The CPU lists are shorter than CUDA's: on the CPU,
// softmax, reductions and pointwise math keep their input dtype.
/// conv2d, mm, bmm, addmm, matmul, linear.
inline constexpr Policy kLowerPrecisionFp{Cast::Lower, Cast::Lower};
/// prod, nll_loss, cross_entropy, mse_loss.
inline constexpr Policy kFp32{Cast::Float32, Cast::Float32};
/// exp, log, log1p, expm1, rsqrt, reciprocal, pow, logsumexp, norm: float32 on CUDA only.
inline constexpr Policy kFp32OnCuda{Cast::None, Cast::Float32};
/// sum, softmax, log_softmax: computed in float32 on CUDA unless a dtype is given.
inline constexpr Policy kFp32SetDtypeOnCuda{Cast::None, Cast::Float32Dtype};
/// addcmul, addcdiv, scatter_add: one dtype for all arguments on CUDA.
inline constexpr Policy kPromoteOnCuda{Cast::None, Cast::Promote};
/// Not on the lists, but made of ops that are (batch_norm): nothing is cast inside.
inline constexpr Policy kNoCast{Cast::None, Cast::None};
/// On none of the lists: nothing is cast, and autocast stays on inside, so that a composite op
/// (multi_head_attention_forward) still has its linears cast.
inline constexpr Policy kNotListed{Cast::None, Cast::None, false};

/// Whether autocast is on for any device type on this thread.
inline bool active() {
  const AutocastState& s = ember::detail::t_local_state.autocast;
  return s.enabled[0] || s.enabled[1];
}

/// Switches autocast off for every device type in its scope (PyTorch's ExcludeDispatchKeyGuard).
class ExcludeAutocast {
 public:
  ExcludeAutocast() : saved_(ember::detail::t_local_state.autocast) {
    for (bool& e : ember::detail::t_local_state.autocast.enabled) e = false;
  }
  ~ExcludeAutocast() {
    for (int i = 0; i < kNumDeviceTypes; ++i)
      ember::detail::t_local_state.autocast.enabled[i] = saved_.enabled[i];
  }
  ExcludeAutocast(const ExcludeAutocast&) = delete;
  ExcludeAutocast& operator=(const ExcludeAutocast&) = delete;

 private:
  AutocastState saved_;
};

/// What `run` casts to: the dtype for tensors (unset: none are cast) and whether an unset dtype
/// argument becomes float32.
struct Target {
  std::optional<DType> tensors;
  bool set_dtype = false;
};

/// Whether autocast may cast `t` on `device_type`: floating, not float64, on that device.
inline bool eligible(const Tensor& t, DeviceType device_type) {
  return t.defined() && t.is_floating_point() && t.dtype() != kFloat64 &&
         t.device().type() == device_type;
}

/// `t` in `dtype`, through the weight cache where PyTorch uses it (float32 leaves that require
/// grad, cast to the autocast dtype inside an autocast region).
Tensor cast(const Tensor& t, DType dtype, DeviceType device_type);

inline Tensor cast_arg(const Target& to, DeviceType d, const Tensor& t) {
  return to.tensors && eligible(t, d) && t.dtype() != *to.tensors ? cast(t, *to.tensors, d) : t;
}
inline std::optional<DType> cast_arg(const Target& to, DeviceType, std::optional<DType> dtype) {
  return to.set_dtype && !dtype ? std::optional<DType>(kFloat32) : dtype;
}
template <typename T>
const T& cast_arg(const Target&, DeviceType, const T& x) {
  return x;
}

inline const Tensor* first_tensor() { return nullptr; }
template <typename A, typename... Rest>
const Tensor* first_tensor(const A& a, const Rest&... rest) {
  if constexpr (std::is_same_v<A, Tensor>)
    if (a.defined()) return &a;
  return first_tensor(rest...);
}

inline DType promote_step(DType current, DeviceType d, const Tensor& t) {
  return eligible(t, d) ? promote_types(current, t.dtype()) : current;
}
template <typename T>
DType promote_step(DType current, DeviceType, const T&) {
  return current;
}

template <typename... Args>
Target target(Cast c, DeviceType d, const Args&... args) {
  switch (c) {
    case Cast::Lower:
      return {get_autocast_dtype(d)};
    case Cast::Float32:
      return {kFloat32};
    case Cast::Float32Dtype: {
      const Tensor* first = first_tensor(args...);
      return {std::nullopt, first && eligible(*first, d)};
    }
    case Cast::Promote: {
      DType t = get_autocast_dtype(d);
      ((t = promote_step(t, d, args)), ...);
      return {t};
    }
    case Cast::None:
      break;
  }
  return {};
}

/// Calls op(args...) with the arguments cast as `policy` says for their device, autocast off
/// inside. See Note [Autocast at the op entry].
template <typename Op, typename... Args>
decltype(auto) run(Policy policy, Op op, const Args&... args) {
  const Tensor* first = first_tensor(args...);
  DeviceType d = first ? first->device().type() : kCPU;
  // Another device type's autocast does not reach these tensors.
  Cast c = !is_autocast_enabled(d) ? Cast::None : d == kCPU ? policy.cpu : policy.cuda;
  Target to = target(c, d, args...);
  ExcludeAutocast off;
  return op(cast_arg(to, d, args)...);
}

}  // namespace ember::amp::detail
