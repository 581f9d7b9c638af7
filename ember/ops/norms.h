// torch.linalg's norms: of vectors (any p, over any dims), of matrices (Frobenius, nuclear, the
// induced 1, 2 and inf norms and their negatives), torch.linalg.norm choosing between them, and
// the condition number.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "ember/core/tensor.h"

namespace ember::linalg {

/// The p-norm of x over dims (all when empty): ord inf, -inf, 0 or any number.
Tensor vector_norm(const Tensor& x, double ord = 2, const Dims& dims = {}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

/// A matrix norm's order: a number (1, -1, 2, -2, inf, -inf) or "fro" / "nuc".
using NormOrd = std::variant<double, std::string>;

/// The norm of the matrices over the two dims.
Tensor matrix_norm(const Tensor& a, const NormOrd& ord = std::string("fro"),
                   std::pair<int64_t, int64_t> dims = {-2, -1}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

/// torch.linalg.norm: a vector norm over one dim (or all, flattened, without ord), a matrix norm
/// over two.
Tensor norm(const Tensor& a, const std::optional<NormOrd>& ord = std::nullopt,
            const Dims& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

/// The condition number in the norm p (None: 2, the ratio of extreme singular values).
Tensor cond(const Tensor& a, const std::optional<NormOrd>& p = std::nullopt);

}  // namespace ember::linalg
