// Reductions over all elements or over dims (keepdim), with their backward formulas.
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

Tensor sum(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim = false);
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false);
/// The largest element (gradient split evenly among ties).
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
/// (values, indices) along `dim`.
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
/// Max over `dims` (all when empty), gradient split evenly among ties.
Tensor amax(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
/// Variance over `dims` (all when empty), with Bessel's correction when `unbiased` (the default).
Tensor var(const Tensor& x, const Dims& dims = {}, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, const Dims& dims = {}, bool unbiased = true, bool keepdim = false);
/// PyTorch's correction= of var and std: the divisor is N - correction (a type of its own, so
/// that no number is taken for `unbiased`).
struct Correction {
  double value;
};
Tensor var(const Tensor& x, const Dims& dims, Correction correction, bool keepdim = false);
Tensor std(const Tensor& x, const Dims& dims, Correction correction, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
/// The p-norm of all elements.
Tensor norm(const Tensor& x, Scalar p = 2);
/// The p-norm over `dims` (all when empty); p may be inf or -inf (max or min of |x|) or 0 (the
/// number of non-zeros).
Tensor norm(const Tensor& x, Scalar p, const Dims& dims, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const Dims& dims, bool keepdim = false);

}  // namespace ember
