// Sorting along a dim: sort, argsort, topk, kthvalue, median, and the cumulative scans cumsum and
// cumprod (each walks a dim in order).
#pragma once

#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// (values, indices) sorted along dim; NaN sorts above every number. Stable on the CPU always.
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false,
                                bool stable = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (or smallest) along dim, sorted when `sorted`; ties keep the lower index first.
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
/// The k-th smallest (1-based) along dim, with its index.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
/// The lower median of all elements, or along dim with its index.
Tensor median(const Tensor& x);
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);

/// Running sum (or product) along dim; integer inputs accumulate in int64 unless dtype is given.
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

}  // namespace ember
