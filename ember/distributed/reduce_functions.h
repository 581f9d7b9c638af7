// Elementwise reductions of the CPU backends (Gloo, MPI): one definition of SUM, PRODUCT, MIN and
// MAX for every dtype, in the dtype's math type (float for the 16-bit floats; for bool, SUM is
// "or" and PRODUCT is "and").
#pragma once

#include <cstddef>
#include <type_traits>

#include "ember/core/dtype.h"
#include "ember/distributed/process_group.h"

namespace ember::distributed {

struct Sum {
  template <typename M>
  M operator()(M a, M b) const {
    if constexpr (std::is_same_v<M, bool>)
      return a || b;
    else
      return a + b;
  }
};
struct Product {
  template <typename M>
  M operator()(M a, M b) const {
    if constexpr (std::is_same_v<M, bool>)
      return a && b;
    else
      return a * b;
  }
};
struct Min {
  template <typename M>
  M operator()(M a, M b) const {
    return b < a ? b : a;
  }
};
struct Max {
  template <typename M>
  M operator()(M a, M b) const {
    return a < b ? b : a;
  }
};

/// out[i] = op(a[i], b[i]) for n elements of type T.
template <typename T, typename Op>
void reduce_elements(void* out, const void* a, const void* b, size_t n) {
  using M = opmath_t<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i)
    o[i] = static_cast<T>(Op{}(static_cast<M>(x[i]), static_cast<M>(y[i])));
}

/// Calls f.template operator()<T, Op>() for the dtype's type and the operation (AVG sums; the
/// caller divides afterwards).
template <typename F>
decltype(auto) dispatch_reduce(DType dtype, ReduceOp op, F&& f) {
  return dispatch_all(dtype, "reduce", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    switch (op) {
      case ReduceOp::PRODUCT:
        return f.template operator()<T, Product>();
      case ReduceOp::MIN:
        return f.template operator()<T, Min>();
      case ReduceOp::MAX:
        return f.template operator()<T, Max>();
      default:
        return f.template operator()<T, Sum>();
    }
  });
}

/// data[i] /= divisor for n elements (AVG after a SUM).
inline void divide_elements(void* data, DType dtype, size_t n, int divisor) {
  dispatch_all(dtype, "all_reduce", [&](auto tag) {
    using T = EMBER_TYPE(tag);
    using M = opmath_t<T>;
    T* p = static_cast<T*>(data);
    for (size_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(static_cast<M>(p[i]) / static_cast<M>(divisor));
  });
}

}  // namespace ember::distributed
