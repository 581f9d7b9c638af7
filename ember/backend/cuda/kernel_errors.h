// Errors found inside kernels (an index out of range). A kernel cannot throw: it records the first
// error in page-locked host memory mapped into the device and skips the element; the host raises
// it at the next point that waits for the device (synchronize, a copy to the host, item()). The
// CUDA context survives, unlike after a device-side assert.
#pragma once

#include <cstdint>

namespace ember::cuda {

struct KernelError {
  int code;  // 0: none; 1: index out of range
  int dim;
  long long index;
  long long size;
  char op[24];
};

/// The device-visible record of `device` (the same memory the host reads).
KernelError* kernel_error_slot(int device);

/// Throws (and clears) the error a kernel on `device` recorded; call once the device is synced.
void check_kernel_errors(int device);

}  // namespace ember::cuda
