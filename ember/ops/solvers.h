// torch.linalg's solvers and what is made of them, over LAPACK (float32 and float64, CPU), with
// PyTorch's backward formulas: linear systems (general, triangular, from LU, Cholesky or LDL^T
// factors), inverse, determinants, least squares, the pseudo-inverse and rank, the matrix
// exponential, and the tensor forms.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::linalg {

/// X with A X = B (left) or X A = B; B is a vector when it has A's batch shape plus n.
Tensor solve(const Tensor& a, const Tensor& b, bool left = true);
/// (X, info): info > 0 where A is singular (no throw unless check_errors).
std::tuple<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left = true,
                                    bool check_errors = false);
/// X with A X = B (left) or X A = B for triangular A.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left = true,
                        bool unitriangular = false);
/// X with A X = B from lu_factor's (LU, pivots); adjoint solves A^T X = B.
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left = true,
                bool adjoint = false);
/// X with A X = B from A's Cholesky factor (torch.cholesky_solve(B, L, upper)).
Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper = false);
/// A^-1 from A's Cholesky factor.
Tensor cholesky_inverse(const Tensor& l, bool upper = false);
/// X with A X = B from ldl_factor's (LD, pivots).
Tensor ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian = false);

Tensor inv(const Tensor& a);
/// (inverse, info).
std::tuple<Tensor, Tensor> inv_ex(const Tensor& a, bool check_errors = false);
Tensor det(const Tensor& a);
/// (sign, log |det|).
std::tuple<Tensor, Tensor> slogdet(const Tensor& a);
/// log det A: NaN where the determinant is negative, -inf where 0.
Tensor logdet(const Tensor& a);

/// (solution, residuals, rank, singular_values) of min ||A X - B||; driver "gelsy" (the CPU's
/// default), "gels", "gelsd" or "gelss"; rcond defaults to eps * max(m, n).
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& a, const Tensor& b,
                                                 std::optional<double> rcond = std::nullopt,
                                                 const std::string& driver = "");
/// The pseudo-inverse: singular values below max(atol, rtol * largest) count as 0. rtol defaults
/// to eps * max(m, n) where atol is not given (or not positive), else to 0.
Tensor pinv(const Tensor& a, std::optional<double> atol = std::nullopt,
            std::optional<double> rtol = std::nullopt, bool hermitian = false);
/// pinv with a tolerance per matrix: atol and rtol broadcast over a's batch dims (an undefined
/// tensor is one not given).
Tensor pinv(const Tensor& a, const Tensor& atol, const Tensor& rtol, bool hermitian);
/// The number of singular values above max(atol, rtol * largest), as int64.
Tensor matrix_rank(const Tensor& a, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
/// matrix_rank with a tolerance per matrix, as pinv's.
Tensor matrix_rank(const Tensor& a, const Tensor& atol, const Tensor& rtol, bool hermitian);
/// e^A by scaling and squaring with a degree-13 Pade approximant (Higham 2005).
Tensor matrix_exp(const Tensor& a);
/// A^n by repeated squaring; n < 0 inverts first.
Tensor matrix_power(const Tensor& a, int64_t n);
/// The product of the matrices in order; the first may be a row vector, the last a column.
Tensor multi_dot(const std::vector<Tensor>& tensors);
/// The inverse of A seen as a matrix of its first ind dims by the rest.
Tensor tensorinv(const Tensor& a, int64_t ind = 2);
/// X with tensordot(A, X, X.ndim) = B.
Tensor tensorsolve(const Tensor& a, const Tensor& b, std::optional<std::vector<int64_t>> dims = {});
/// sum(x * y) over dim.
Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);
/// The Vandermonde matrix of x: columns x^0, x^1, ..., x^(N-1).
Tensor vander(const Tensor& x, std::optional<int64_t> n = std::nullopt);

}  // namespace ember::linalg
