// Turns an op table entry's kind into the dtypes its kernels are instantiated for; both backends
// expand their tables through it.
#pragma once

#include <type_traits>

#include "ember/backend/functors/params.h"
#include "ember/core/dtype.h"

namespace ember {

/// `complex`: the op's functor also runs on complex64 and complex128 (and the backend takes them).
template <OpKind kind, bool complex, typename F>
void dispatch_kind(DType t, const char* op, F&& f) {
  if constexpr (complex) {
    if (is_complex(t)) return dispatch_complex(t, op, f);
  }
  if constexpr (kind == OpKind::Floating)
    dispatch_floating(t, op, f);
  else if constexpr (kind == OpKind::Numeric)
    dispatch_numeric(t, op, f);
  else if constexpr (kind == OpKind::Integral)
    dispatch_integral(t, op, f);
  else if constexpr (kind == OpKind::Bool) {
    if (t != DType::Bool) throw_unsupported_dtype(op, t);
    f(TypeTag<bool>{});
  } else {
    dispatch_all(t, op, f);
  }
}

}  // namespace ember
