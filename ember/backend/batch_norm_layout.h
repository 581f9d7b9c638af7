// How both batch-norm backends see their input: x as (N, C, S), and the dtype pair they compute
// in (x's type T, the statistics type A: float for 16-bit x).
#pragma once

#include "ember/backend/kernels.h"

namespace ember {

struct BatchNormLayout {
  int64_t N, C, S;  // S: the product of the dims after C
};

inline BatchNormLayout batch_norm_layout(const Tensor& x) {
  int64_t S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
  return {x.size(0), x.size(1), S};
}

/// Calls f(TypeTag<T>, TypeTag<A>) for x's dtype and its statistics type.
template <typename F>
void dispatch_batch_norm(DType t, const char* op, const F& f) {
  dispatch_floating(t, op, [&](auto tag) {
    using T = EMBER_TYPE(tag);
    f(tag, TypeTag<opmath_t<T>>{});
  });
}

}  // namespace ember
