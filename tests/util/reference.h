// Plain reference computations for tests: written with loops over doubles (integers: over 64-bit
// words), independent of the kernels they check.
#pragma once

#include <functional>
#include <vector>

#include "ember/ember.h"

namespace ember::testing {

/// The values of t broadcast to `shape`, computed by index arithmetic.
std::vector<double> broadcast_values(const Tensor& t, const Shape& shape);

/// Elementwise reference: f applied to the broadcast inputs.
std::vector<double> ref_binary(const Tensor& a, const Tensor& b,
                               const std::function<double(double, double)>& f);
std::vector<double> ref_unary(const Tensor& a, const std::function<double(double)>& f);

/// Integer (M, K) @ (K, N) as PyTorch's CPU computes it: products and sums wrap around in the
/// dtype's width (here: modulo 2^64, then cut to the dtype, which keeps the same low bits).
Tensor ref_mm_wrapping(const Tensor& a, const Tensor& b);

/// A tensor of `shape` holding `values` in `dtype`.
Tensor make(const std::vector<double>& values, const Shape& shape, DType dtype = kFloat64);

}  // namespace ember::testing
