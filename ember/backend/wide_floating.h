// Dispatch for the kernels that compute in the input's own floating type and are instantiated for
// float32 and float64 only (attention, the recurrent cells): their ops widen 16-bit inputs first.
// Shared by the CPU and CUDA backends.
#pragma once

#include "ember/core/dtype.h"

namespace ember {

/// Calls f(TypeTag<float>{}) or f(TypeTag<double>{}); any other dtype is an error naming `op`.
template <typename F>
void dispatch_wide_floating(DType t, const char* op, F&& f) {
  if (t == kFloat64)
    f(TypeTag<double>{});
  else if (t == kFloat32)
    f(TypeTag<float>{});
  else
    throw_unsupported_dtype(op, t);
}

}  // namespace ember
