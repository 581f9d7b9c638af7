// LAPACK's routines (Debian's OpenBLAS ships them) for float, double, Complex<float> and
// Complex<double> (the s, d, c and z routines): one column-major matrix (or a pair) per call,
// sizes as int. The ops in ops/decompositions.cpp and ops/solvers.cpp loop over batches and lay
// their tensors out column-major (a row-major (n, m) buffer is the column-major (m, n) one).
// Workspace queries (lwork = -1) are done inside each wrapper. For complex T a transpose is the
// conjugate transpose and a symmetric matrix a Hermitian one (orgqr, ormqr and syevd call ungqr,
// unmqr and heevd); singular values, eigenvalues of Hermitian matrices and rcond are real.
#pragma once

#include "ember/core/complex.h"

namespace ember::lapack {

/// A = P L U in place (m x n); ipiv 1-based, min(m, n) of them. Returns LAPACK's info.
template <typename T>
int getrf(int m, int n, T* a, int lda, int* ipiv);
/// Solves A X = B (trans 'N') or A^H X = B ('T') with getrf's factors; B (n x nrhs) in place.
template <typename T>
int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb);
/// Cholesky: A = L L^H ('L') or U^H U ('U') in place, the other triangle untouched.
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
int gesdd(char jobz, int m, int n, T* a, int lda, real_of_t<T>* s, T* u, int ldu, T* vt,
          int ldvt);
/// Symmetric eigendecomposition by divide and conquer: w ascending; with jobz 'V' the
/// eigenvectors replace A.
template <typename T>
int syevd(char jobz, char uplo, int n, T* a, int lda, real_of_t<T>* w);
/// The general eigenproblem of a real matrix: eigenvalues wr + i wi, right eigenvectors in vr
/// (jobvr 'V'), a conjugate pair's as two real columns (re, im).
template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vr, int ldvr);
/// ... and of a complex one (T complex): eigenvalues w, unit eigenvectors in vr.
template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* w, T* vr, int ldvr);
/// Least squares: the minimum-norm solution by QR with column pivoting (gelsy), the SVD
/// (gelsd, gelss; singular values in s), or QR / LQ for full rank (gels). B (max(m, n) x nrhs).
template <typename T>
int gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T> rcond, int* rank);
template <typename T>
int gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T>* s,
          real_of_t<T> rcond, int* rank);
template <typename T>
int gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T>* s,
          real_of_t<T> rcond, int* rank);
template <typename T>
int gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb);
/// Bunch-Kaufman LDL^T of a symmetric matrix, and the solve with it.
template <typename T>
int sytrf(char uplo, int n, T* a, int lda, int* ipiv);
template <typename T>
int sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb);
/// The same for a Hermitian matrix, LDL^H (sytrf and sytrs for real T).
template <typename T>
int hetrf(char uplo, int n, T* a, int lda, int* ipiv);
template <typename T>
int hetrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb);

}  // namespace ember::lapack
