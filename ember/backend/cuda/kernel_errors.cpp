#include "ember/backend/cuda/kernel_errors.h"

#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "ember/backend/cuda/device.h"
#include "ember/backend/cuda/runtime.h"

namespace ember::cuda {
namespace {

struct Slots {
  std::vector<KernelError*> host, device;
  std::vector<std::once_flag> once;
  explicit Slots(int n)
      : host(static_cast<size_t>(n)),
        device(static_cast<size_t>(n)),
        once(static_cast<size_t>(n)) {}
};

Slots& slots() {
  static Slots* s = new Slots(device_count());
  return *s;
}

}  // namespace

KernelError* kernel_error_slot(int device) {
  Slots& s = slots();
  auto d = static_cast<size_t>(device);
  std::call_once(s.once[d], [&] {
    RawDeviceGuard guard(device);
    void* h = nullptr;
    EMBER_CUDA_CHECK(cudaHostAlloc(&h, sizeof(KernelError), cudaHostAllocMapped));
    std::memset(h, 0, sizeof(KernelError));
    void* dp = nullptr;
    EMBER_CUDA_CHECK(cudaHostGetDevicePointer(&dp, h, 0));
    s.host[d] = static_cast<KernelError*>(h);
    s.device[d] = static_cast<KernelError*>(dp);
  });
  return s.device[d];
}

void check_kernel_errors(int device) {
  Slots& s = slots();
  auto d = static_cast<size_t>(device);
  if (d >= s.host.size() || !s.host[d]) return;
  KernelError* e = s.host[d];
  if (e->code == 0) return;
  KernelError copy = *e;
  std::memset(e, 0, sizeof(KernelError));
  copy.op[sizeof(copy.op) - 1] = '\0';
  EMBER_FAIL("[", copy.op, "] index ", copy.index, " is out of bounds for dimension ", copy.dim,
             " with size ", copy.size, " (found by a kernel on cuda:", device,
             " queued earlier; EMBER_CUDA_SYNC=1 reports "
             "it at its op)");
}

}  // namespace ember::cuda
