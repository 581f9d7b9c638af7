// Automatic mixed precision's switch: torch.autocast as a guard, the per-thread settings it
// changes, and the cache of low-precision copies of weights. Which ops cast what is in
// ops/autocast.h (PyTorch's op lists); this file only holds the state the ops consult.
#pragma once

#include <optional>
#include <string_view>

#include "ember/core/tensor.h"
#include "ember/core/thread_local_state.h"

namespace ember::amp {

/// Whether autocast is on for tensors of this device type on this thread.
bool is_autocast_enabled(DeviceType device_type);
void set_autocast_enabled(DeviceType device_type, bool enabled);
/// The low-precision dtype autocast casts to (default bfloat16 on the CPU, float16 on CUDA).
DType get_autocast_dtype(DeviceType device_type);
void set_autocast_dtype(DeviceType device_type, DType dtype);
/// Whether low-precision copies of float32 leaf parameters are cached within an autocast region.
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
/// Drops this thread's cached casts (the outermost autocast guard does this when it ends).
void clear_autocast_cache();

/// torch.autocast: within its scope, ops on PyTorch's lists run in `dtype` (matmul, linear,
/// conv) or in float32 (losses, and on CUDA softmax, log_softmax, reductions, pointwise
/// transcendentals), whatever their inputs' floating dtype; others run as usual. Guards nest and
/// restore the previous settings on exit; `enabled = false` switches autocast off in a region.
///   { amp::autocast guard(kCPU);  Tensor y = model->forward(x); }   // y is bfloat16
/// The CPU takes bfloat16 or float16, CUDA float16 or bfloat16 (its default is float16); other
/// dtypes are an error. Casts are differentiable: gradients flow back in the inputs' dtypes.
class autocast {
 public:
  explicit autocast(DeviceType device_type, std::optional<DType> dtype = std::nullopt,
                    bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  /// "cpu" or "cuda", as torch.autocast("cuda", ...).
  explicit autocast(std::string_view device_type, std::optional<DType> dtype = std::nullopt,
                    bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DeviceType device_type_;
  AutocastState saved_;
};

namespace detail {
/// The cached low-precision copy of `source` (a float32 leaf that requires grad) made within the
/// current autocast region, or an undefined tensor. A copy is only reused while `source` has
/// the same storage and version it was made from.
Tensor cached_cast(const Tensor& source, DType dtype);
void cache_cast(const Tensor& source, const Tensor& cast);
/// Whether the calling thread is inside an autocast guard (the cache lives only there).
bool in_autocast_region();
}  // namespace detail

}  // namespace ember::amp

namespace ember {
using amp::autocast;  // torch.autocast
}  // namespace ember
