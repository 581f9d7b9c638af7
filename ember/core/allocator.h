// The allocator interface and the owning pointer it hands out. Storage holds a DataPtr; the
// deleter returns the memory to whichever allocator made it (a cache, a shared-memory segment...).
#pragma once

#include <cstddef>
#include <utility>

#include "ember/core/device.h"

namespace ember {

using DeleterFn = void (*)(void* ctx);

/// Owns `ptr` on `device`; calls deleter(ctx) once when destroyed. Move-only.
class DataPtr {
 public:
  DataPtr() : device_(DeviceType::CPU, 0) {}
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept
      : ptr_(o.ptr_), ctx_(o.ctx_), deleter_(o.deleter_), device_(o.device_) {
    o.ptr_ = o.ctx_ = nullptr;
    o.deleter_ = nullptr;
  }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      std::swap(ptr_, o.ptr_);
      std::swap(ctx_, o.ctx_);
      std::swap(deleter_, o.deleter_);
      device_ = o.device_;
    }
    return *this;
  }
  ~DataPtr() { reset(); }

  void* get() const { return ptr_; }
  void* context() const { return ctx_; }
  DeleterFn deleter() const { return deleter_; }
  Device device() const { return device_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void reset() noexcept {
    if (deleter_) deleter_(ctx_);
    ptr_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

/// Where a tensor's memory comes from: a device's caching allocator, shared memory
/// (core/shared_memory.h), pinned host memory...
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Memory for `nbytes` bytes (64-byte aligned at least); throws OutOfMemoryError when none is
  /// left.
  virtual DataPtr allocate(size_t nbytes) = 0;
};

/// The allocator of new tensors on `device` (c10::GetAllocator): its backend's caching allocator.
Allocator& get_allocator(Device device);

}  // namespace ember
