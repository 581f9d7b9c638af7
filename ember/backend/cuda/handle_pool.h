// Internal to the CUDA backend: per-device pools of library handles (cuBLAS, cuDNN).
//
// Note [Library handles]
// A handle must not be used by two threads at once, and making one takes milliseconds, so each
// device keeps a pool: a call borrows a free handle (a new one only when all are lent out) and
// returns it when done. Threads that come and go, such as parallel_apply's, reuse the same few
// handles; nothing is made or leaked per thread. Handles live as long as the process.
#pragma once

#include <mutex>
#include <vector>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/core/per_device.h"

namespace ember::cuda {

/// A handle of type Handle borrowed for one call from its device's pool; Create makes a new one
/// with the device current.
template <typename Handle, Handle (*Create)()>
class BorrowedHandle {
 public:
  explicit BorrowedHandle(int device) : pool_(pool(device)), handle_(pool_.take(device)) {}
  ~BorrowedHandle() { pool_.give_back(handle_); }
  BorrowedHandle(const BorrowedHandle&) = delete;
  BorrowedHandle& operator=(const BorrowedHandle&) = delete;
  Handle get() const { return handle_; }

 private:
  class Pool {
   public:
    Handle take(int device) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!free_.empty()) {
          Handle h = free_.back();
          free_.pop_back();
          return h;
        }
      }
      RawDeviceGuard guard(device);
      return Create();
    }
    void give_back(Handle h) {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(h);
    }

   private:
    std::mutex mutex_;
    std::vector<Handle> free_;
  };
  static Pool& pool(int device) {
    static auto* pools = new PerDevice<Pool>(device_count());
    return pools->get(device, [] { return new Pool(); });
  }
  Pool& pool_;
  Handle handle_;
};

}  // namespace ember::cuda
