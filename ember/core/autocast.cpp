#include "ember/core/autocast.h"

#include <unordered_map>

#include "ember/core/grad_mode.h"

namespace ember::amp {
namespace {

AutocastState& state() { return ember::detail::t_local_state.autocast; }
int index(DeviceType t) { return static_cast<int>(t); }

// Depth of autocast guards on this thread: the cache is emptied when the outermost one ends, so
// copies of weights never outlive the forward pass that made them (PyTorch's `nesting`).
thread_local int t_nesting = 0;

// Low-precision copies of float32 leaves that require grad (model weights), so that a weight used
// by several ops in one forward is cast once (PyTorch, after Apex). The key is the source's
// TensorImpl; the entry keeps a weak reference to it so that a new tensor at a reused address is
// not mistaken for it, and the storage and version it was cast from, so that a weight changed
// in place (or moved by set_data) is cast again.
struct CacheEntry {
  std::weak_ptr<TensorImpl> source;
  Storage storage;
  uint32_t version;
  Tensor cast;
};
thread_local std::unordered_map<const TensorImpl*, CacheEntry> t_cache;

DeviceType parse_device_type(std::string_view s) {
  if (s == "cpu") return kCPU;
  if (s == "cuda") return kCUDA;
  EMBER_FAIL("[autocast] expected device_type 'cpu' or 'cuda', got '", s, "'");
}

void check_dtype(DeviceType t, DType d) {
  EMBER_CHECK(d == kBFloat16 || d == kFloat16, "[autocast] expected dtype bfloat16 or float16 for ",
              device_type_name(t), " autocast, got ", d);
}

}  // namespace

bool is_autocast_enabled(DeviceType t) { return state().enabled[index(t)]; }
void set_autocast_enabled(DeviceType t, bool enabled) { state().enabled[index(t)] = enabled; }
DType get_autocast_dtype(DeviceType t) { return state().dtype[index(t)]; }
void set_autocast_dtype(DeviceType t, DType d) {
  check_dtype(t, d);
  state().dtype[index(t)] = d;
}
bool is_autocast_cache_enabled() { return state().cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { state().cache_enabled = enabled; }
void clear_autocast_cache() { t_cache.clear(); }

autocast::autocast(DeviceType device_type, std::optional<DType> dtype, bool enabled,
                   std::optional<bool> cache_enabled)
    : device_type_(device_type), saved_(state()) {
  if (dtype) check_dtype(device_type, *dtype);
  // Like PyTorch: CUDA autocast on a machine without CUDA is allowed; it has no tensors to cast.
  AutocastState& s = state();
  s.enabled[index(device_type)] = enabled;
  if (dtype) s.dtype[index(device_type)] = *dtype;
  if (cache_enabled) s.cache_enabled = *cache_enabled;
  ++t_nesting;
}

autocast::autocast(std::string_view device_type, std::optional<DType> dtype, bool enabled,
                   std::optional<bool> cache_enabled)
    : autocast(parse_device_type(device_type), dtype, enabled, cache_enabled) {}

autocast::~autocast() {
  if (--t_nesting == 0) t_cache.clear();
  AutocastState& s = state();
  s.enabled[index(device_type_)] = saved_.enabled[index(device_type_)];
  s.dtype[index(device_type_)] = saved_.dtype[index(device_type_)];
  s.cache_enabled = saved_.cache_enabled;
}

namespace detail {

bool in_autocast_region() { return t_nesting > 0; }

Tensor cached_cast(const Tensor& source, DType dtype) {
  auto it = t_cache.find(source.unsafe_impl());
  if (it == t_cache.end()) return Tensor();
  const CacheEntry& e = it->second;
  if (e.source.expired() || e.storage != source.storage() || e.version != source._version() ||
      e.cast.dtype() != dtype)
    return Tensor();
  // A copy made under no_grad has no graph back to the weight: not reusable when recording.
  if (GradMode::is_enabled() && !e.cast.requires_grad()) return Tensor();
  return e.cast;
}

void cache_cast(const Tensor& source, const Tensor& cast) {
  t_cache[source.unsafe_impl()] =
      CacheEntry{source.impl(), source.storage(), source._version(), cast};
}

}  // namespace detail
}  // namespace ember::amp
