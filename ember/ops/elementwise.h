// Elementwise ops with broadcasting and PyTorch's type promotion, their in-place variants, and the
// arithmetic operators. Each records its backward formula (defined beside it in the .cpp).
#pragma once

#include <optional>

#include "ember/backend/functors/binary.h"
#include "ember/core/tensor.h"

namespace ember {

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, Scalar exponent);
Tensor pow(Scalar base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, Scalar b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

Tensor neg(const Tensor& x);
Tensor& neg_(Tensor& x);  // in place: x.neg_()
Tensor abs(const Tensor& x);
Tensor& abs_(Tensor& x);  // in place: x.abs_()
Tensor exp(const Tensor& x);
Tensor& exp_(Tensor& x);  // in place: x.exp_()
Tensor log(const Tensor& x);
Tensor& log_(Tensor& x);  // in place: x.log_()
Tensor sqrt(const Tensor& x);
Tensor& sqrt_(Tensor& x);  // in place: x.sqrt_()
Tensor rsqrt(const Tensor& x);
Tensor& rsqrt_(Tensor& x);  // in place: x.rsqrt_()
Tensor tanh(const Tensor& x);
Tensor& tanh_(Tensor& x);  // in place: x.tanh_()
Tensor sigmoid(const Tensor& x);
Tensor& sigmoid_(Tensor& x);  // in place: x.sigmoid_()
Tensor relu(const Tensor& x);
Tensor& relu_(Tensor& x);  // in place: x.relu_()
Tensor sin(const Tensor& x);
Tensor& sin_(Tensor& x);  // in place: x.sin_()
Tensor cos(const Tensor& x);
Tensor& cos_(Tensor& x);  // in place: x.cos_()
Tensor square(const Tensor& x);
Tensor& square_(Tensor& x);  // in place: x.square_()
Tensor reciprocal(const Tensor& x);
Tensor& reciprocal_(Tensor& x);  // in place: x.reciprocal_()
Tensor sign(const Tensor& x);
Tensor& sign_(Tensor& x);  // in place: x.sign_()
Tensor floor(const Tensor& x);
Tensor& floor_(Tensor& x);  // in place: x.floor_()
Tensor ceil(const Tensor& x);
Tensor& ceil_(Tensor& x);  // in place: x.ceil_()
Tensor round(const Tensor& x);
Tensor& round_(Tensor& x);  // in place: x.round_()
Tensor log1p(const Tensor& x);
Tensor& log1p_(Tensor& x);  // in place: x.log1p_()
Tensor expm1(const Tensor& x);
Tensor& expm1_(Tensor& x);  // in place: x.expm1_()
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
/// clamp with tensor bounds (broadcast; an undefined one is no bound), differentiable in all three.
Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max);

/// Write into a preallocated `out` (torch.add(a, b, out=out)); no autograd.
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);

/// cond ? a : b, broadcast over all three.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor lerp(const Tensor& self, const Tensor& end, Scalar weight);
/// self + weight * (end - self), weight a tensor broadcast with both.
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
/// With a 0-dim tensor value, differentiable in it.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

/// |a - b| <= atol + rtol * |b| everywhere (same shape after broadcasting).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
/// Same shape and the same values.
bool equal(const Tensor& a, const Tensor& b);
/// Whether each element is finite (not infinite, not NaN); true for every non-floating dtype.
Tensor isfinite(const Tensor& x);

/// Raw kernels without autograd, for backward formulas and optimizers.
namespace detail {
Tensor unary(UnaryOp op, const Tensor& x, const UnaryParams& p = {});
/// The dtype unary(op, x) gives for an x of dtype t.
DType unary_result_dtype(UnaryOp op, DType t);
/// Runs op in place on self, without autograd; self's dtype must be the op's result dtype.
Tensor& unary_inplace(UnaryOp op, Tensor& self, const UnaryParams& p = {});
/// self.name_() of a unary op: its kernel in place, or `fn` and a copy back where autograd
/// records it or the result has another dtype that casts into self's (as PyTorch's in-place ops).
Tensor& unary_inplace_op(UnaryOp op, Tensor& self, Tensor (*fn)(const Tensor&), const char* name);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const BinaryParams& p = {});
Tensor binary_scalar(BinaryOp op, const Tensor& a, Scalar b, const BinaryParams& p = {});
/// out = op(out, b) in place, b broadcast to out's shape.
void binary_into(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b,
                 const BinaryParams& p = {});
/// self.name_(other) of a binary op: its kernel writing into self (binary_into), or `fn` and
/// PyTorch's in-place autograd where a graph is recorded (as unary_inplace_op).
Tensor& binary_inplace_op(BinaryOp op, Tensor& self, const Tensor& other,
                          Tensor (*fn)(const Tensor&, const Tensor&), const char* name);
/// The same with a number for other (its kernel over self, with self's dtype when that holds
/// the result).
Tensor& binary_scalar_inplace_op(BinaryOp op, Tensor& self, Scalar other,
                                 Tensor (*fn)(const Tensor&, Scalar), const char* name);
}  // namespace detail

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b);
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b);
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
inline Tensor operator&&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
inline Tensor operator||(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
inline Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace ember
