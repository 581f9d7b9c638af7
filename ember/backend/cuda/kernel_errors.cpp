#include "ember/backend/cuda/kernel_errors.h"

#include <cuda_runtime.h>

#include <cstring>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/runtime.h"
#include "ember/core/per_device.h"

namespace ember::cuda {
namespace {

// The mapped host memory a kernel writes its first index error into, and the device's view of it.
struct Slot {
  KernelError* host = nullptr;
  KernelError* device = nullptr;
};

PerDevice<Slot>& slots() {
  static auto* s = new PerDevice<Slot>(device_count());
  return *s;
}

}  // namespace

KernelError* kernel_error_slot(int device) {
  return slots()
      .get(device,
           [&] {
             RawDeviceGuard guard(device);
             void* h = nullptr;
             EMBER_CUDA_CHECK(cudaHostAlloc(&h, sizeof(KernelError), cudaHostAllocMapped));
             std::memset(h, 0, sizeof(KernelError));
             void* dp = nullptr;
             EMBER_CUDA_CHECK(cudaHostGetDevicePointer(&dp, h, 0));
             return new Slot{static_cast<KernelError*>(h), static_cast<KernelError*>(dp)};
           })
      .device;
}

void check_kernel_errors(int device) {
  Slot* slot = slots().find(device);
  if (!slot) return;  // no kernel on this device has reported anything
  KernelError* e = slot->host;
  if (e->code == 0) return;
  KernelError copy = *e;
  std::memset(e, 0, sizeof(KernelError));
  copy.op[sizeof(copy.op) - 1] = '\0';
  detail::throw_index_error(detail::str_cat(
      "[", copy.op, "] index ", copy.index, " is out of bounds for dimension ", copy.dim,
      " with size ", copy.size, " (found by a kernel on cuda:", device,
      " queued earlier; EMBER_CUDA_SYNC=1 reports it at its op)"));
}

}  // namespace ember::cuda
