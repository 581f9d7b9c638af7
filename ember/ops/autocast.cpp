#include "ember/ops/autocast.h"

#include "ember/ops/copy.h"

namespace ember::amp::detail {

Tensor cast(const Tensor& t, DType dtype, DeviceType device_type) {
  // PyTorch's heuristic (after Apex): cache the low-precision copies of float32 weights, the
  // leaves that require grad, for the rest of the autocast region.
  bool cacheable = in_autocast_region() && is_autocast_cache_enabled() &&
                   dtype == get_autocast_dtype(device_type) && t.dtype() == kFloat32 &&
                   t.requires_grad() && t.is_leaf() && !t.is_view();
  if (!cacheable) return t.to(dtype);
  Tensor hit = cached_cast(t, dtype);
  if (hit.defined()) return hit;
  Tensor c = t.to(dtype);
  cache_cast(t, c);
  return c;
}

}  // namespace ember::amp::detail
