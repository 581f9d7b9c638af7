// torch.linalg's matrix decompositions over LAPACK (float32 and float64, on the CPU), batched over
// leading dims, with PyTorch's backward formulas: Cholesky, LU, QR, the symmetric eigenproblem,
// the SVD, and LDL^T; the older torch.* spellings of them are in ops/solvers.h.
#pragma once

#include <string>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember::linalg {

/// A = L L^T (upper: A = U^T U). Throws when A is not positive-definite.
Tensor cholesky(const Tensor& a, bool upper = false);
/// (L, info): info > 0 where a matrix is not positive-definite (no throw unless check_errors).
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& a, bool upper = false,
                                       bool check_errors = false);

/// (LU, pivots): L below the diagonal (unit diagonal implied), U on and above; pivots 1-based
/// int32, as LAPACK's getrf.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& a, bool pivot = true);
/// (LU, pivots, info).
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot = true,
                                                bool check_errors = false);
/// (P, L, U) with A = P L U.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a, bool pivot = true);
/// lu_factor's packed result as (P, L, U); either part may be skipped (empty tensors).
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots,
                                             bool unpack_data = true, bool unpack_pivots = true);

/// (Q, R); mode "reduced", "complete" or "r" (Q empty).
std::tuple<Tensor, Tensor> qr(const Tensor& a, const std::string& mode = "reduced");
/// LAPACK's geqrf: (a with R and the reflectors, tau).
std::tuple<Tensor, Tensor> geqrf(const Tensor& a);
/// The first n columns of the product of the Householder reflectors (a, tau) (orgqr).
Tensor householder_product(const Tensor& a, const Tensor& tau);
/// op(Q) C or C op(Q) for Q given by geqrf's (a, tau).
Tensor ormqr(const Tensor& a, const Tensor& tau, const Tensor& c, bool left = true,
             bool transpose = false);

/// (eigenvalues ascending, eigenvectors) of the symmetric matrices whose UPLO ("L" or "U")
/// triangle A holds.
std::tuple<Tensor, Tensor> eigh(const Tensor& a, const std::string& uplo = "L");
Tensor eigvalsh(const Tensor& a, const std::string& uplo = "L");
/// (eigenvalues, unit right eigenvectors) of general real square matrices, complex as LAPACK's
/// geev gives them (complex inputs are not supported yet); eigvals the values alone.
std::tuple<Tensor, Tensor> eig(const Tensor& a);
Tensor eigvals(const Tensor& a);

/// (U, S, Vh) with A = U diag(S) Vh; full_matrices gives square U and Vh.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices = true);
Tensor svdvals(const Tensor& a);

/// (LD, pivots, info): the Bunch-Kaufman factorization of a symmetric matrix (sytrf).
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& a, bool hermitian = false,
                                                 bool check_errors = false);
std::tuple<Tensor, Tensor> ldl_factor(const Tensor& a, bool hermitian = false);

}  // namespace ember::linalg
