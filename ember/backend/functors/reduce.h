// Reduction functors, written once for the CPU loop and the CUDA kernel: an identity and an
// associative combine over the accumulation type.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/backend/functors/math.h"
#include "ember/core/dtype.h"

namespace ember {

enum class ReduceOp { Sum, Prod, Max, Min, ArgMax, ArgMin, All, Any };

/// The type a sum or product accumulates in: float for floating inputs up to 32 bits, double
/// for double, int64 for integers and bool.
template <typename T>
struct SumAcc {
  using type = std::conditional_t<std::is_same_v<T, double>, double,
                                  std::conditional_t<std::is_integral_v<T>, int64_t, float>>;
};
/// Complex sums accumulate in complex128 (PyTorch's CPU accumulation type for complex64).
template <typename T>
struct SumAcc<Complex<T>> {
  using type = Complex<double>;
};
template <typename T>
using sum_acc_t = typename SumAcc<T>::type;

template <typename A>
struct SumReducer {
  EMBER_HOST_DEVICE static A identity() { return A(0); }
  EMBER_HOST_DEVICE A operator()(A a, A b) const { return a + b; }
};
template <typename A>
struct ProdReducer {
  EMBER_HOST_DEVICE static A identity() { return A(1); }
  EMBER_HOST_DEVICE A operator()(A a, A b) const { return a * b; }
};
template <typename A>
struct MaxReducer {
  EMBER_HOST_DEVICE static A identity() {
    if constexpr (std::is_floating_point_v<A>)
      return -std::numeric_limits<A>::infinity();
    else
      return std::numeric_limits<A>::lowest();
  }
  EMBER_HOST_DEVICE A operator()(A a, A b) const { return math::max(a, b); }
};
template <typename A>
struct MinReducer {
  EMBER_HOST_DEVICE static A identity() {
    if constexpr (std::is_floating_point_v<A>)
      return std::numeric_limits<A>::infinity();
    else
      return std::numeric_limits<A>::max();
  }
  EMBER_HOST_DEVICE A operator()(A a, A b) const { return math::min(a, b); }
};
struct AllReducer {
  EMBER_HOST_DEVICE static bool identity() { return true; }
  EMBER_HOST_DEVICE bool operator()(bool a, bool b) const { return a && b; }
};
struct AnyReducer {
  EMBER_HOST_DEVICE static bool identity() { return false; }
  EMBER_HOST_DEVICE bool operator()(bool a, bool b) const { return a || b; }
};

/// Whether candidate (v, i) beats the current best (b, j) for argmax (is_max) or argmin: NaN wins,
/// and among equals the first index.
template <typename A>
EMBER_HOST_DEVICE inline bool arg_better(A v, int64_t i, A b, int64_t j, bool is_max) {
  if (math::isnan(b)) return math::isnan(v) && i < j;
  if (math::isnan(v)) return true;
  if (v == b) return i < j;
  return is_max ? v > b : v < b;
}

}  // namespace ember
