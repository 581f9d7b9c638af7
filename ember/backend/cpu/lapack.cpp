#include "ember/backend/cpu/lapack.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

// LAPACK's Fortran interface: every argument by pointer, a character argument followed by its
// length at the end (gfortran's hidden arguments; OpenBLAS's C versions ignore them).
using Len = std::size_t;
extern "C" {
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void sgetrs_(const char*, const int*, const int*, const float*, const int*, const int*, float*,
             const int*, int*, Len);
void dgetrs_(const char*, const int*, const int*, const double*, const int*, const int*, double*,
             const int*, int*, Len);
void spotrf_(const char*, const int*, float*, const int*, int*, Len);
void dpotrf_(const char*, const int*, double*, const int*, int*, Len);
void spotrs_(const char*, const int*, const int*, const float*, const int*, float*, const int*,
             int*, Len);
void dpotrs_(const char*, const int*, const int*, const double*, const int*, double*, const int*,
             int*, Len);
void spotri_(const char*, const int*, float*, const int*, int*, Len);
void dpotri_(const char*, const int*, double*, const int*, int*, Len);
void strtrs_(const char*, const char*, const char*, const int*, const int*, const float*,
             const int*, float*, const int*, int*, Len, Len, Len);
void dtrtrs_(const char*, const char*, const char*, const int*, const int*, const double*,
             const int*, double*, const int*, int*, Len, Len, Len);
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*,
             const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
             const int*, int*);
void sormqr_(const char*, const char*, const int*, const int*, const int*, const float*,
             const int*, const float*, float*, const int*, float*, const int*, int*, Len, Len);
void dormqr_(const char*, const char*, const int*, const int*, const int*, const double*,
             const int*, const double*, double*, const int*, double*, const int*, int*, Len, Len);
void sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*, const int*,
             float*, const int*, float*, const int*, int*, int*, Len);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*,
             const int*, double*, const int*, double*, const int*, int*, int*, Len);
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*,
             int*, const int*, int*, Len, Len);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, Len, Len);
void sgeev_(const char*, const char*, const int*, float*, const int*, float*, float*, float*,
            const int*, float*, const int*, float*, const int*, int*, Len, Len);
void dgeev_(const char*, const char*, const int*, double*, const int*, double*, double*, double*,
            const int*, double*, const int*, double*, const int*, int*, Len, Len);
void sgelsy_(const int*, const int*, const int*, float*, const int*, float*, const int*, int*,
             const float*, int*, float*, const int*, int*);
void dgelsy_(const int*, const int*, const int*, double*, const int*, double*, const int*, int*,
             const double*, int*, double*, const int*, int*);
void sgelsd_(const int*, const int*, const int*, float*, const int*, float*, const int*, float*,
             const float*, int*, float*, const int*, int*, int*);
void dgelsd_(const int*, const int*, const int*, double*, const int*, double*, const int*,
             double*, const double*, int*, double*, const int*, int*, int*);
void sgelss_(const int*, const int*, const int*, float*, const int*, float*, const int*, float*,
             const float*, int*, float*, const int*, int*);
void dgelss_(const int*, const int*, const int*, double*, const int*, double*, const int*,
             double*, const double*, int*, double*, const int*, int*);
void sgels_(const char*, const int*, const int*, const int*, float*, const int*, float*,
            const int*, float*, const int*, int*, Len);
void dgels_(const char*, const int*, const int*, const int*, double*, const int*, double*,
            const int*, double*, const int*, int*, Len);
void ssytrf_(const char*, const int*, float*, const int*, int*, float*, const int*, int*, Len);
void dsytrf_(const char*, const int*, double*, const int*, int*, double*, const int*, int*, Len);
void ssytrs_(const char*, const int*, const int*, const float*, const int*, const int*, float*,
             const int*, int*, Len);
void dsytrs_(const char*, const int*, const int*, const double*, const int*, const int*, double*,
             const int*, int*, Len);
}

namespace ember::lapack {
namespace {

// A workspace of the size LAPACK asked for (its first query returns it in work[0]).
template <typename T>
int workspace_size(T query) {
  return std::max(1, static_cast<int>(query));
}

}  // namespace

// The routine for T: s<name>_ for float, d<name>_ for double.
#define EMBER_CALL(name, ...)                 \
  do {                                        \
    if constexpr (std::is_same_v<T, float>)   \
      s##name##_(__VA_ARGS__);                \
    else                                      \
      d##name##_(__VA_ARGS__);                \
  } while (0)

template <typename T>
int getrf(int m, int n, T* a, int lda, int* ipiv) {
  int info = 0;
  EMBER_CALL(getrf, &m, &n, a, &lda, ipiv, &info);
  return info;
}

template <typename T>
int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  int info = 0;
  EMBER_CALL(getrs, &trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

template <typename T>
int potrf(char uplo, int n, T* a, int lda) {
  int info = 0;
  EMBER_CALL(potrf, &uplo, &n, a, &lda, &info, 1);
  return info;
}

template <typename T>
int potrs(char uplo, int n, int nrhs, const T* a, int lda, T* b, int ldb) {
  int info = 0;
  EMBER_CALL(potrs, &uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
  return info;
}

template <typename T>
int potri(char uplo, int n, T* a, int lda) {
  int info = 0;
  EMBER_CALL(potri, &uplo, &n, a, &lda, &info, 1);
  return info;
}

template <typename T>
int trtrs(char uplo, char trans, char diag, int n, int nrhs, const T* a, int lda, T* b, int ldb) {
  int info = 0;
  EMBER_CALL(trtrs, &uplo, &trans, &diag, &n, &nrhs, a, &lda, b, &ldb, &info, 1, 1, 1);
  return info;
}

template <typename T>
int geqrf(int m, int n, T* a, int lda, T* tau) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(geqrf, &m, &n, a, &lda, tau, &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(geqrf, &m, &n, a, &lda, tau, work.data(), &lwork, &info);
  return info;
}

template <typename T>
int orgqr(int m, int n, int k, T* a, int lda, const T* tau) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(orgqr, &m, &n, &k, a, &lda, tau, &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(orgqr, &m, &n, &k, a, &lda, tau, work.data(), &lwork, &info);
  return info;
}

template <typename T>
int ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, T* c,
          int ldc) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(ormqr, &side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, &query, &lwork, &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(ormqr, &side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work.data(), &lwork, &info,
             1, 1);
  return info;
}

template <typename T>
int gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt) {
  int info = 0, lwork = -1;
  T query = 0;
  std::vector<int> iwork(static_cast<size_t>(8 * std::max(1, std::min(m, n))));
  EMBER_CALL(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &query, &lwork, iwork.data(),
             &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork,
             iwork.data(), &info, 1);
  return info;
}

template <typename T>
int syevd(char jobz, char uplo, int n, T* a, int lda, T* w) {
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  T query = 0;
  EMBER_CALL(syevd, &jobz, &uplo, &n, a, &lda, w, &query, &lwork, &iquery, &liwork, &info, 1, 1);
  lwork = workspace_size(query);
  liwork = std::max(1, iquery);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  EMBER_CALL(syevd, &jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork,
             &info, 1, 1);
  return info;
}

template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vr, int ldvr) {
  int info = 0, lwork = -1, one = 1;
  char jobvl = 'N';
  T query = 0, vl = 0;
  EMBER_CALL(geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, &vl, &one, vr, &ldvr, &query, &lwork,
             &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, &vl, &one, vr, &ldvr, work.data(), &lwork,
             &info, 1, 1);
  return info;
}

template <typename T>
int gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T rcond, int* rank) {
  int info = 0, lwork = -1;
  T query = 0;
  std::vector<int> jpvt(static_cast<size_t>(std::max(1, n)), 0);
  EMBER_CALL(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank, &query, &lwork,
             &info);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank, work.data(),
             &lwork, &info);
  return info;
}

template <typename T>
int gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank) {
  int info = 0, lwork = -1, iquery = 0;
  T query = 0;
  EMBER_CALL(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork, &iquery,
             &info);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(std::max(1, iquery)));
  EMBER_CALL(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(), &lwork,
             iwork.data(), &info);
  return info;
}

template <typename T>
int gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(), &lwork, &info);
  return info;
}

template <typename T>
int gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb) {
  int info = 0, lwork = -1;
  char trans = 'N';
  T query = 0;
  EMBER_CALL(gels, &trans, &m, &n, &nrhs, a, &lda, b, &ldb, &query, &lwork, &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(gels, &trans, &m, &n, &nrhs, a, &lda, b, &ldb, work.data(), &lwork, &info, 1);
  return info;
}

template <typename T>
int sytrf(char uplo, int n, T* a, int lda, int* ipiv) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(sytrf, &uplo, &n, a, &lda, ipiv, &query, &lwork, &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  EMBER_CALL(sytrf, &uplo, &n, a, &lda, ipiv, work.data(), &lwork, &info, 1);
  return info;
}

template <typename T>
int sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  int info = 0;
  EMBER_CALL(sytrs, &uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

#undef EMBER_CALL

#define EMBER_INSTANTIATE(T)                                                                   \
  template int getrf<T>(int, int, T*, int, int*);                                              \
  template int getrs<T>(char, int, int, const T*, int, const int*, T*, int);                   \
  template int potrf<T>(char, int, T*, int);                                                   \
  template int potrs<T>(char, int, int, const T*, int, T*, int);                               \
  template int potri<T>(char, int, T*, int);                                                   \
  template int trtrs<T>(char, char, char, int, int, const T*, int, T*, int);                   \
  template int geqrf<T>(int, int, T*, int, T*);                                                \
  template int orgqr<T>(int, int, int, T*, int, const T*);                                     \
  template int ormqr<T>(char, char, int, int, int, const T*, int, const T*, T*, int);          \
  template int gesdd<T>(char, int, int, T*, int, T*, T*, int, T*, int);                        \
  template int syevd<T>(char, char, int, T*, int, T*);                                         \
  template int geev<T>(char, int, T*, int, T*, T*, T*, int);                                   \
  template int gelsy<T>(int, int, int, T*, int, T*, int, T, int*);                             \
  template int gelsd<T>(int, int, int, T*, int, T*, int, T*, T, int*);                         \
  template int gelss<T>(int, int, int, T*, int, T*, int, T*, T, int*);                         \
  template int gels<T>(int, int, int, T*, int, T*, int);                                       \
  template int sytrf<T>(char, int, T*, int, int*);                                             \
  template int sytrs<T>(char, int, int, const T*, int, const int*, T*, int);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember::lapack
