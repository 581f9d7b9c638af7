// Elementwise kernels as a fuser sees them (Note [Kernel notes]).
#include "ember/ops/kernel_capture.h"

namespace ember {

KernelCaptureGuard::KernelCaptureGuard(KernelCapture& capture)
    : saved_(detail::t_kernel_capture) {
  detail::t_kernel_capture = &capture;
}

KernelCaptureGuard::~KernelCaptureGuard() { detail::t_kernel_capture = saved_; }

}  // namespace ember
