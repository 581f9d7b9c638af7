// Ops that rearrange elements into a new tensor: flip, roll, the triangles (tril, triu), diag and
// diag_embed, tensor_split, meshgrid.
#pragma once

#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// The elements in reverse order along each of `dims`.
Tensor flip(const Tensor& x, const Shape& dims);
/// x rotated by 90 degrees k times in the plane of dims (from the first toward the second).
Tensor rot90(const Tensor& x, int64_t k = 1, const Shape& dims = {0, 1});
/// Elements shifted by `shifts` along `dims` (wrapping around); no dims: over the flattened tensor.
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims = {});
/// The lower (upper) triangle of the last two dims, from diagonal k on; the rest zero.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
/// A 1-D x: the square matrix with x on diagonal k; a 2-D x: its k-th diagonal.
Tensor diag(const Tensor& x, int64_t diagonal = 0);
/// The last dim of x on the diagonal of two new dims (dim1, dim2).
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
/// Splits into `sections` nearly equal parts along dim (views).
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
/// Splits at the given indices along dim (views).
std::vector<Tensor> tensor_split_at(const Tensor& x, const Shape& indices, int64_t dim = 0);
/// Coordinate grids of 1-D tensors; indexing "ij" (matrix) or "xy" (Cartesian).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, const std::string& indexing = "ij");

}  // namespace ember
