// LAPACK's routines (Debian's OpenBLAS ships them) for float and double: one column-major matrix
// (or a pair) per call, sizes as int. The ops in ops/linalg_*.cpp loop over batches and lay
// their tensors out column-major (a row-major (n, m) buffer is the column-major (m, n) one).
// Workspace queries (lwork = -1) are done inside each wrapper.
#pragma once

namespace ember::lapack {

/// A = P L U in place (m x n); ipiv 1-based, min(m, n) of them. Returns LAPACK's info.
template <typename T>
int getrf(int m, int n, T* a, int lda, int* ipiv);
/// Solves A X = B (trans 'N') or A^T X = B ('T') with getrf's factors; B (n x nrhs) in place.
template <typename T>
int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb);
/// Cholesky: A = L L^T ('L') or U^T U ('U') in place, the other triangle untouched.
template <typename T>
int potrf(char uplo, int n, T* a, int lda);
template <typename T>
int potrs(char uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb);
/// The inverse of A from its Cholesky factor, in the same triangle.
template <typename T>
int potri(char uplo, int n, T* a, int lda);
/// Solves op(A) X = B for triangular A; uplo 'U'/'L', trans 'N'/'T', diag 'N'/'U'.
template <typename T>
int trtrs(char uplo, char trans, char diag, int n, int nrhs, const T* a, int lda, T* b, int ldb);
/// QR: R in the upper triangle, Householder reflectors below with their scalars in tau.
template <typename T>
int geqrf(int m, int n, T* a, int lda, T* tau);
/// The first n columns of the product of k reflectors (orgqr's Q), in place.
template <typename T>
int orgqr(int m, int n, int k, T* a, int lda, const T* tau);
/// C := op(Q) C ('L') or C op(Q) ('R'), Q from k reflectors of geqrf.
template <typename T>
int ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, T* c,
          int ldc);
/// SVD by divide and conquer; jobz 'N' (values only), 'S' (reduced) or 'A' (full). A is destroyed.
template <typename T>
int gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt);
/// Symmetric eigendecomposition by divide and conquer: w ascending; with jobz 'V' the
/// eigenvectors replace A.
template <typename T>
int syevd(char jobz, char uplo, int n, T* a, int lda, T* w);
/// The general eigenproblem: eigenvalues wr + i wi, right eigenvectors in vr (jobvr 'V').
template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vr, int ldvr);
/// Least squares: the minimum-norm solution by QR with column pivoting (gelsy), the SVD
/// (gelsd, gelss; singular values in s), or QR / LQ for full rank (gels). B (max(m, n) x nrhs).
template <typename T>
int gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T rcond, int* rank);
template <typename T>
int gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank);
template <typename T>
int gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank);
template <typename T>
int gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb);
/// Bunch-Kaufman LDL^T of a symmetric matrix, and the solve with it.
template <typename T>
int sytrf(char uplo, int n, T* a, int lda, int* ipiv);
template <typename T>
int sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb);

}  // namespace ember::lapack
