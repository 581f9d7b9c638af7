// Indexing ops: gather, scatter, scatter_add, scatter_reduce, index_select, one_hot, embedding.
#pragma once

#include <optional>
#include <string>

#include "ember/core/tensor.h"

namespace ember {

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
/// x's elements at index along dim, x and index broadcast against each other elsewhere; no dim:
/// the flattened x at the flattened index.
Tensor take_along_dim(const Tensor& x, const Tensor& index, std::optional<int64_t> dim = {});
/// The flattened x at index, in index's shape.
Tensor take(const Tensor& x, const Tensor& index);
/// A copy of x with src written at index along dim (duplicate indices: one of the values wins).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of x with src combined in at index along dim by reduce: "sum", "prod", "mean", "amax"
/// or "amin" (a NaN wins amax and amin); include_self false leaves x's own values out of the
/// positions written.
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// x with alpha * source's slices added at `index` along dim (repeated indices accumulate).
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
/// (..., num_classes) int64 with a 1 at each index; num_classes -1 infers max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
/// weight (num_embeddings, dim) looked up by integer indices of any shape.
Tensor embedding(const Tensor& weight, const Tensor& indices);
/// Scales the rows of weight that indices name down to a norm (of order norm_type) of at most
/// max_norm, in place and outside autograd (embedding's max_norm; torch.embedding_renorm_).
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type);

}  // namespace ember
