// One lazily made object per device index: made at most once even when threads race for it, and
// never destroyed, because tensors, streams and kernels may still use it during static
// destruction.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/core/error.h"

namespace ember {

template <typename T>
class PerDevice {
 public:
  explicit PerDevice(int count) : slots_(static_cast<size_t>(count)) {}

  /// The object of device `index`, made by make() (returning T*) the first time.
  template <typename Make>
  T& get(int index, Make&& make) {
    Slot& s = slot(index);
    std::call_once(s.once, [&] { s.ptr.store(make(), std::memory_order_release); });
    return *s.ptr.load(std::memory_order_acquire);
  }
  /// The object of device `index` if it has been made, else nullptr.
  T* find(int index) const {
    if (index < 0 || static_cast<size_t>(index) >= slots_.size()) return nullptr;
    return slots_[static_cast<size_t>(index)].ptr.load(std::memory_order_acquire);
  }
  int size() const { return static_cast<int>(slots_.size()); }

 private:
  struct Slot {
    std::once_flag once;
    std::atomic<T*> ptr{nullptr};
  };
  Slot& slot(int index) {
    EMBER_ASSERT(index >= 0 && static_cast<size_t>(index) < slots_.size(), "device index ", index,
                 " out of range for ", slots_.size(), " devices");
    return slots_[static_cast<size_t>(index)];
  }
  std::vector<Slot> slots_;
};

}  // namespace ember
