// Elementwise kernels as a fuser sees them (Note [Kernel notes]).
#include "ember/ops/kernel_capture.h"

namespace ember {
namespace {
thread_local KernelCapture* t_kernel_capture = nullptr;
}

KernelCaptureGuard::KernelCaptureGuard(KernelCapture& capture) : saved_(t_kernel_capture) {
  t_kernel_capture = &capture;
}

KernelCaptureGuard::~KernelCaptureGuard() { t_kernel_capture = saved_; }

KernelCapture* detail::kernel_capture() { return t_kernel_capture; }

}  // namespace ember
