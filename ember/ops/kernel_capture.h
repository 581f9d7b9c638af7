// Elementwise kernels as a fuser sees them: while a KernelCapture is installed on a thread, each
// run of the shared elementwise tables (backend/functors: unary, binary, binary with a number)
// that an op starts there is noted with its table entry, parameters and tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/backend/functors/binary.h"
#include "ember/backend/functors/params.h"
#include "ember/backend/functors/unary.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {

// Note [Kernel notes]
// An op's capture record (ops/capture.h) says which op ran on which tensors, not what it computed:
// `add` may be one binary kernel, or a cast and then one. A fuser needs the second: the kernel's
// functor and parameters, which it can run again over a block of its own (compile/fused.h). The
// three entry points of the tables in ops/ (detail::unary, binary, binary_scalar) note each run;
// ember/compile/ matches a note to the op whose result it wrote, by identity of the tensor.

/// One run of an elementwise table entry.
struct KernelNote {
  enum class Kind : uint8_t { Unary, Binary, BinaryScalar };
  Kind kind = Kind::Unary;
  int code = 0;  // the UnaryOp or BinaryOp
  UnaryParams unary_params;
  BinaryParams binary_params;
  Scalar scalar;               // BinaryScalar's right operand
  std::vector<Tensor> inputs;  // as the kernel read them (after any cast)
  Tensor output;
};

/// The kernels noted on the threads it is installed on (KernelCaptureGuard), in run order.
struct KernelCapture {
  std::vector<KernelNote> notes;
};

/// Installs `capture` on this thread for its scope, then puts back what was there.
class KernelCaptureGuard {
 public:
  explicit KernelCaptureGuard(KernelCapture& capture);
  ~KernelCaptureGuard();
  KernelCaptureGuard(const KernelCaptureGuard&) = delete;
  KernelCaptureGuard& operator=(const KernelCaptureGuard&) = delete;

 private:
  KernelCapture* saved_;
};

namespace detail {
// Inline: the elementwise entry points read it on every op, capture or not.
inline thread_local KernelCapture* t_kernel_capture = nullptr;
/// The capture installed on this thread, or nullptr.
inline KernelCapture* kernel_capture() { return t_kernel_capture; }
}  // namespace detail

}  // namespace ember
