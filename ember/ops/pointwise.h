// Pointwise math beyond the arithmetic of elementwise.h: the error function, logarithms and
// exponentials in other bases, trigonometric and hyperbolic functions, Python's % and //, fmod,
// atan2, and the checks for NaN and infinity.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
/// Rounds toward zero; frac is x - trunc(x).
Tensor trunc(const Tensor& x);
Tensor frac(const Tensor& x);

/// Python's a % b: the result has b's sign.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
/// C's fmod: the result has a's sign.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
/// a // b, rounded toward -inf (integers stay integers).
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);
/// a / b with rounding_mode "trunc" or "floor" (none: true division).
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
/// Bitwise ops of integer (and bool) tensors; the shifts as PyTorch's bitwise_left_shift and
/// bitwise_right_shift. ~x is bitwise_not (logical not for bool).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& x);

Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
/// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: 0 and the dtype's largest values).
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = 0.0,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
/// |a - b| <= atol + rtol |b|, elementwise (NaNs equal when equal_nan).
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);

}  // namespace ember
