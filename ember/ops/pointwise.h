// Pointwise math beyond the arithmetic of elementwise.h: the error function, logarithms and
// exponentials in other bases, trigonometric and hyperbolic functions, Python's % and //, fmod,
// atan2, and the checks for NaN and infinity.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

Tensor erf(const Tensor& x);
Tensor& erf_(Tensor& x);  // in place: x.erf_()
Tensor erfc(const Tensor& x);
Tensor& erfc_(Tensor& x);  // in place: x.erfc_()
Tensor log2(const Tensor& x);
Tensor& log2_(Tensor& x);  // in place: x.log2_()
Tensor log10(const Tensor& x);
Tensor& log10_(Tensor& x);  // in place: x.log10_()
Tensor exp2(const Tensor& x);
Tensor& exp2_(Tensor& x);  // in place: x.exp2_()
Tensor tan(const Tensor& x);
Tensor& tan_(Tensor& x);  // in place: x.tan_()
Tensor sinh(const Tensor& x);
Tensor& sinh_(Tensor& x);  // in place: x.sinh_()
Tensor cosh(const Tensor& x);
Tensor& cosh_(Tensor& x);  // in place: x.cosh_()
Tensor asin(const Tensor& x);
Tensor& asin_(Tensor& x);  // in place: x.asin_()
Tensor acos(const Tensor& x);
Tensor& acos_(Tensor& x);  // in place: x.acos_()
Tensor atan(const Tensor& x);
Tensor& atan_(Tensor& x);  // in place: x.atan_()
Tensor asinh(const Tensor& x);
Tensor& asinh_(Tensor& x);  // in place: x.asinh_()
Tensor acosh(const Tensor& x);
Tensor& acosh_(Tensor& x);  // in place: x.acosh_()
Tensor atanh(const Tensor& x);
Tensor& atanh_(Tensor& x);  // in place: x.atanh_()
/// Rounds toward zero; frac is x - trunc(x).
Tensor trunc(const Tensor& x);
Tensor& trunc_(Tensor& x);  // in place: x.trunc_()
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
/// log(exp(a) + exp(b)), without overflow.
Tensor logaddexp(const Tensor& a, const Tensor& b);
/// max(a, b) and min(a, b), elementwise, taking the number where one side is NaN.
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
/// Degrees to radians and back.
Tensor deg2rad(const Tensor& x);
Tensor rad2deg(const Tensor& x);
Tensor logical_xor(const Tensor& a, const Tensor& b);
/// Bitwise ops of integer (and bool) tensors; the shifts as PyTorch's bitwise_left_shift and
/// bitwise_right_shift. ~x is bitwise_not (logical not for bool).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
/// In place (x.remainder_(y), ...): each op's kernel writing into a, entered as an op of its own.
Tensor& remainder_(Tensor& a, const Tensor& b);
Tensor& remainder_(Tensor& a, Scalar b);
Tensor& fmod_(Tensor& a, const Tensor& b);
Tensor& fmod_(Tensor& a, Scalar b);
Tensor& floor_divide_(Tensor& a, const Tensor& b);
Tensor& floor_divide_(Tensor& a, Scalar b);
Tensor& bitwise_and_(Tensor& a, const Tensor& b);
Tensor& bitwise_or_(Tensor& a, const Tensor& b);
Tensor& bitwise_xor_(Tensor& a, const Tensor& b);
Tensor& bitwise_left_shift_(Tensor& a, const Tensor& b);
Tensor& bitwise_right_shift_(Tensor& a, const Tensor& b);
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
