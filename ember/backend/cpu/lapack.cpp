#include "ember/backend/cpu/lapack.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

// LAPACK's Fortran interface: every argument by pointer, a character argument followed by its
// length at the end (gfortran's hidden arguments; OpenBLAS's C versions ignore them). Complex
// arguments are Fortran COMPLEX, whose layout ember's Complex<T> has.
using Len = std::size_t;
using C = ember::Complex<float>;
using Z = ember::Complex<double>;

// Each signature is written once over T (the element type) and R (its real type); the DECLARE
// macros stamp out the s/d (real) and c/z (complex) symbols from it.
#define EMBER_DECLARE_ONE(p, T, R, name, SIG) void p##name##_ SIG(T, R);
#define EMBER_DECLARE_REAL(name, SIG) \
  EMBER_DECLARE_ONE(s, float, float, name, SIG) EMBER_DECLARE_ONE(d, double, double, name, SIG)
#define EMBER_DECLARE_COMPLEX(name, SIG) \
  EMBER_DECLARE_ONE(c, C, float, name, SIG) EMBER_DECLARE_ONE(z, Z, double, name, SIG)
#define EMBER_DECLARE_ALL(name, SIG) EMBER_DECLARE_REAL(name, SIG) EMBER_DECLARE_COMPLEX(name, SIG)

// clang-format off
#define GETRF(T, R) (const int*, const int*, T*, const int*, int*, int*)
#define GETRS(T, R) (const char*, const int*, const int*, const T*, const int*, const int*, T*, \
                     const int*, int*, Len)
#define POTRF(T, R) (const char*, const int*, T*, const int*, int*, Len)
#define POTRS(T, R) (const char*, const int*, const int*, const T*, const int*, T*, const int*, \
                     int*, Len)
#define TRTRS(T, R) (const char*, const char*, const char*, const int*, const int*, const T*, \
                     const int*, T*, const int*, int*, Len, Len, Len)
#define GEQRF(T, R) (const int*, const int*, T*, const int*, T*, T*, const int*, int*)
#define ORGQR(T, R) (const int*, const int*, const int*, T*, const int*, const T*, T*, \
                     const int*, int*)
#define ORMQR(T, R) (const char*, const char*, const int*, const int*, const int*, const T*, \
                     const int*, const T*, T*, const int*, T*, const int*, int*, Len, Len)
#define GESDD_R(T, R) (const char*, const int*, const int*, T*, const int*, R*, T*, const int*, \
                       T*, const int*, T*, const int*, int*, int*, Len)
#define GESDD_C(T, R) (const char*, const int*, const int*, T*, const int*, R*, T*, const int*, \
                       T*, const int*, T*, const int*, R*, int*, int*, Len)
#define SYEVD(T, R) (const char*, const char*, const int*, T*, const int*, R*, T*, const int*, \
                     int*, const int*, int*, Len, Len)
#define HEEVD(T, R) (const char*, const char*, const int*, T*, const int*, R*, T*, const int*, \
                     R*, const int*, int*, const int*, int*, Len, Len)
#define GEEV_R(T, R) (const char*, const char*, const int*, T*, const int*, T*, T*, T*, \
                      const int*, T*, const int*, T*, const int*, int*, Len, Len)
#define GEEV_C(T, R) (const char*, const char*, const int*, T*, const int*, T*, T*, const int*, \
                      T*, const int*, T*, const int*, R*, int*, Len, Len)
#define GELSY_R(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, int*, \
                       const R*, int*, T*, const int*, int*)
#define GELSY_C(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, int*, \
                       const R*, int*, T*, const int*, R*, int*)
#define GELSD_R(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, R*, \
                       const R*, int*, T*, const int*, int*, int*)
#define GELSD_C(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, R*, \
                       const R*, int*, T*, const int*, R*, int*, int*)
#define GELSS_R(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, R*, \
                       const R*, int*, T*, const int*, int*)
#define GELSS_C(T, R) (const int*, const int*, const int*, T*, const int*, T*, const int*, R*, \
                       const R*, int*, T*, const int*, R*, int*)
#define GELS(T, R) (const char*, const int*, const int*, const int*, T*, const int*, T*, \
                    const int*, T*, const int*, int*, Len)
#define SYTRF(T, R) (const char*, const int*, T*, const int*, int*, T*, const int*, int*, Len)
#define SYTRS(T, R) (const char*, const int*, const int*, const T*, const int*, const int*, T*, \
                     const int*, int*, Len)
// clang-format on

extern "C" {
EMBER_DECLARE_ALL(getrf, GETRF)
EMBER_DECLARE_ALL(getrs, GETRS)
EMBER_DECLARE_ALL(potrf, POTRF)
EMBER_DECLARE_ALL(potrs, POTRS)
EMBER_DECLARE_ALL(potri, POTRF)
EMBER_DECLARE_ALL(trtrs, TRTRS)
EMBER_DECLARE_ALL(geqrf, GEQRF)
EMBER_DECLARE_REAL(orgqr, ORGQR)
EMBER_DECLARE_COMPLEX(ungqr, ORGQR)
EMBER_DECLARE_REAL(ormqr, ORMQR)
EMBER_DECLARE_COMPLEX(unmqr, ORMQR)
EMBER_DECLARE_REAL(gesdd, GESDD_R)
EMBER_DECLARE_COMPLEX(gesdd, GESDD_C)
EMBER_DECLARE_REAL(syevd, SYEVD)
EMBER_DECLARE_COMPLEX(heevd, HEEVD)
EMBER_DECLARE_REAL(geev, GEEV_R)
EMBER_DECLARE_COMPLEX(geev, GEEV_C)
EMBER_DECLARE_REAL(gelsy, GELSY_R)
EMBER_DECLARE_COMPLEX(gelsy, GELSY_C)
EMBER_DECLARE_REAL(gelsd, GELSD_R)
EMBER_DECLARE_COMPLEX(gelsd, GELSD_C)
EMBER_DECLARE_REAL(gelss, GELSS_R)
EMBER_DECLARE_COMPLEX(gelss, GELSS_C)
EMBER_DECLARE_ALL(gels, GELS)
EMBER_DECLARE_ALL(sytrf, SYTRF)
EMBER_DECLARE_ALL(sytrs, SYTRS)
EMBER_DECLARE_COMPLEX(hetrf, SYTRF)
EMBER_DECLARE_COMPLEX(hetrs, SYTRS)
}

namespace ember::lapack {
namespace {

// A workspace of the size LAPACK asked for (its first query returns it in work[0], a complex
// query in the real part).
template <typename T>
int workspace_size(T query) {
  return std::max(1, static_cast<int>(query));
}

template <typename T>
std::vector<T> buffer(int size) {
  return std::vector<T>(static_cast<size_t>(std::max(1, size)));
}

}  // namespace

// The routine for T: s<name>_ for float, d<name>_ for double, c<cname>_ and z<cname>_ for the
// complex types (their arguments differ only where a real workspace is added).
#define EMBER_CALL_AS(name, cname, ...)                      \
  do {                                                       \
    if constexpr (std::is_same_v<T, float>)                  \
      s##name##_(__VA_ARGS__);                               \
    else if constexpr (std::is_same_v<T, double>)            \
      d##name##_(__VA_ARGS__);                               \
    else if constexpr (std::is_same_v<T, C>)                 \
      c##cname##_(__VA_ARGS__);                              \
    else                                                     \
      z##cname##_(__VA_ARGS__);                              \
  } while (0)
#define EMBER_CALL(name, ...) EMBER_CALL_AS(name, name, __VA_ARGS__)
// Routines whose complex form takes more arguments: each branch names only its own types.
#define EMBER_CALL_REAL(name, ...)                 \
  do {                                             \
    if constexpr (std::is_same_v<T, float>)        \
      s##name##_(__VA_ARGS__);                     \
    else                                           \
      d##name##_(__VA_ARGS__);                     \
  } while (0)
#define EMBER_CALL_COMPLEX(name, ...)              \
  do {                                             \
    if constexpr (std::is_same_v<T, C>)            \
      c##name##_(__VA_ARGS__);                     \
    else                                           \
      z##name##_(__VA_ARGS__);                     \
  } while (0)

// 'T' asks for the conjugate transpose of a complex matrix ('C' there; 'T' for real ones).
template <typename T>
char adjoint(char trans) {
  return is_complex_v<T> && trans == 'T' ? 'C' : trans;
}

template <typename T>
int getrf(int m, int n, T* a, int lda, int* ipiv) {
  int info = 0;
  EMBER_CALL(getrf, &m, &n, a, &lda, ipiv, &info);
  return info;
}

template <typename T>
int getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  int info = 0;
  trans = adjoint<T>(trans);
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
  trans = adjoint<T>(trans);
  EMBER_CALL(trtrs, &uplo, &trans, &diag, &n, &nrhs, a, &lda, b, &ldb, &info, 1, 1, 1);
  return info;
}

template <typename T>
int geqrf(int m, int n, T* a, int lda, T* tau) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(geqrf, &m, &n, a, &lda, tau, &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL(geqrf, &m, &n, a, &lda, tau, work.data(), &lwork, &info);
  return info;
}

template <typename T>
int orgqr(int m, int n, int k, T* a, int lda, const T* tau) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL_AS(orgqr, ungqr, &m, &n, &k, a, &lda, tau, &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL_AS(orgqr, ungqr, &m, &n, &k, a, &lda, tau, work.data(), &lwork, &info);
  return info;
}

template <typename T>
int ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, T* c,
          int ldc) {
  int info = 0, lwork = -1;
  T query = 0;
  trans = adjoint<T>(trans);
  EMBER_CALL_AS(ormqr, unmqr, &side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, &query, &lwork,
                &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL_AS(ormqr, unmqr, &side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work.data(),
                &lwork, &info, 1, 1);
  return info;
}

template <typename T>
int gesdd(char jobz, int m, int n, T* a, int lda, real_of_t<T>* s, T* u, int ldu, T* vt,
          int ldvt) {
  using R = real_of_t<T>;
  int info = 0, lwork = -1, mn = std::min(m, n), mx = std::max(m, n);
  T query = 0;
  std::vector<int> iwork = buffer<int>(8 * mn);
  if constexpr (is_complex_v<T>) {
    // LAPACK 3.7's bound on the real workspace (older releases asked for less).
    std::vector<R> rwork = buffer<R>(jobz == 'N' ? 7 * mn
                                                 : mn * std::max(5 * mn + 7, 2 * mx + 2 * mn + 1));
    EMBER_CALL_COMPLEX(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &query, &lwork,
                       rwork.data(), iwork.data(), &info, 1);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_COMPLEX(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork,
                       rwork.data(), iwork.data(), &info, 1);
  } else {
    EMBER_CALL_REAL(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &query, &lwork,
                    iwork.data(), &info, 1);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_REAL(gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork,
                    iwork.data(), &info, 1);
  }
  return info;
}

template <typename T>
int syevd(char jobz, char uplo, int n, T* a, int lda, real_of_t<T>* w) {
  using R = real_of_t<T>;
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  T query = 0;
  if constexpr (is_complex_v<T>) {
    int lrwork = -1;
    R rquery = 0;
    EMBER_CALL_COMPLEX(heevd, &jobz, &uplo, &n, a, &lda, w, &query, &lwork, &rquery, &lrwork,
                       &iquery, &liwork, &info, 1, 1);
    lwork = workspace_size(query);
    lrwork = workspace_size(rquery);
    liwork = std::max(1, iquery);
    std::vector<T> work = buffer<T>(lwork);
    std::vector<R> rwork = buffer<R>(lrwork);
    std::vector<int> iwork = buffer<int>(liwork);
    EMBER_CALL_COMPLEX(heevd, &jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, rwork.data(),
                       &lrwork, iwork.data(), &liwork, &info, 1, 1);
  } else {
    EMBER_CALL_REAL(syevd, &jobz, &uplo, &n, a, &lda, w, &query, &lwork, &iquery, &liwork, &info,
                    1, 1);
    lwork = workspace_size(query);
    liwork = std::max(1, iquery);
    std::vector<T> work = buffer<T>(lwork);
    std::vector<int> iwork = buffer<int>(liwork);
    EMBER_CALL_REAL(syevd, &jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(),
                    &liwork, &info, 1, 1);
  }
  return info;
}

template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vr, int ldvr) {
  static_assert(!is_complex_v<T>, "geev with (wr, wi) is the real routine");
  int info = 0, lwork = -1, one = 1;
  char jobvl = 'N';
  T query = 0, vl = 0;
  EMBER_CALL_REAL(geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, &vl, &one, vr, &ldvr, &query,
                  &lwork, &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL_REAL(geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, &vl, &one, vr, &ldvr, work.data(),
                  &lwork, &info, 1, 1);
  return info;
}

template <typename T>
int geev(char jobvr, int n, T* a, int lda, T* w, T* vr, int ldvr) {
  static_assert(is_complex_v<T>, "geev with one w is the complex routine");
  int info = 0, lwork = -1, one = 1;
  char jobvl = 'N';
  T query = 0, vl = 0;
  std::vector<real_of_t<T>> rwork = buffer<real_of_t<T>>(2 * n);
  EMBER_CALL_COMPLEX(geev, &jobvl, &jobvr, &n, a, &lda, w, &vl, &one, vr, &ldvr, &query, &lwork,
                     rwork.data(), &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL_COMPLEX(geev, &jobvl, &jobvr, &n, a, &lda, w, &vl, &one, vr, &ldvr, work.data(),
                     &lwork, rwork.data(), &info, 1, 1);
  return info;
}

template <typename T>
int gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T> rcond, int* rank) {
  int info = 0, lwork = -1;
  T query = 0;
  std::vector<int> jpvt(static_cast<size_t>(std::max(1, n)), 0);
  if constexpr (is_complex_v<T>) {
    std::vector<real_of_t<T>> rwork = buffer<real_of_t<T>>(2 * n);
    EMBER_CALL_COMPLEX(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank, &query,
                       &lwork, rwork.data(), &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_COMPLEX(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank,
                       work.data(), &lwork, rwork.data(), &info);
  } else {
    EMBER_CALL_REAL(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank, &query,
                    &lwork, &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_REAL(gelsy, &m, &n, &nrhs, a, &lda, b, &ldb, jpvt.data(), &rcond, rank,
                    work.data(), &lwork, &info);
  }
  return info;
}

template <typename T>
int gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T>* s,
          real_of_t<T> rcond, int* rank) {
  using R = real_of_t<T>;
  int info = 0, lwork = -1, iquery = 0;
  T query = 0;
  if constexpr (is_complex_v<T>) {
    R rquery = 0;
    EMBER_CALL_COMPLEX(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork,
                       &rquery, &iquery, &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    std::vector<R> rwork = buffer<R>(workspace_size(rquery));
    std::vector<int> iwork = buffer<int>(iquery);
    EMBER_CALL_COMPLEX(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(),
                       &lwork, rwork.data(), iwork.data(), &info);
  } else {
    EMBER_CALL_REAL(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork,
                    &iquery, &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    std::vector<int> iwork = buffer<int>(iquery);
    EMBER_CALL_REAL(gelsd, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(), &lwork,
                    iwork.data(), &info);
  }
  return info;
}

template <typename T>
int gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, real_of_t<T>* s,
          real_of_t<T> rcond, int* rank) {
  int info = 0, lwork = -1;
  T query = 0;
  if constexpr (is_complex_v<T>) {
    std::vector<real_of_t<T>> rwork = buffer<real_of_t<T>>(5 * std::min(m, n));
    EMBER_CALL_COMPLEX(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork,
                       rwork.data(), &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_COMPLEX(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(),
                       &lwork, rwork.data(), &info);
  } else {
    EMBER_CALL_REAL(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &query, &lwork,
                    &info);
    lwork = workspace_size(query);
    std::vector<T> work = buffer<T>(lwork);
    EMBER_CALL_REAL(gelss, &m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work.data(), &lwork,
                    &info);
  }
  return info;
}

template <typename T>
int gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb) {
  int info = 0, lwork = -1;
  char trans = 'N';
  T query = 0;
  EMBER_CALL(gels, &trans, &m, &n, &nrhs, a, &lda, b, &ldb, &query, &lwork, &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL(gels, &trans, &m, &n, &nrhs, a, &lda, b, &ldb, work.data(), &lwork, &info, 1);
  return info;
}

template <typename T>
int sytrf(char uplo, int n, T* a, int lda, int* ipiv) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL(sytrf, &uplo, &n, a, &lda, ipiv, &query, &lwork, &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL(sytrf, &uplo, &n, a, &lda, ipiv, work.data(), &lwork, &info, 1);
  return info;
}

template <typename T>
int sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  int info = 0;
  EMBER_CALL(sytrs, &uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

template <typename T>
int hetrf(char uplo, int n, T* a, int lda, int* ipiv) {
  int info = 0, lwork = -1;
  T query = 0;
  EMBER_CALL_AS(sytrf, hetrf, &uplo, &n, a, &lda, ipiv, &query, &lwork, &info, 1);
  lwork = workspace_size(query);
  std::vector<T> work = buffer<T>(lwork);
  EMBER_CALL_AS(sytrf, hetrf, &uplo, &n, a, &lda, ipiv, work.data(), &lwork, &info, 1);
  return info;
}

template <typename T>
int hetrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  int info = 0;
  EMBER_CALL_AS(sytrs, hetrs, &uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

#undef EMBER_CALL_COMPLEX
#undef EMBER_CALL_REAL
#undef EMBER_CALL
#undef EMBER_CALL_AS

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
  template int gesdd<T>(char, int, int, T*, int, real_of_t<T>*, T*, int, T*, int);             \
  template int syevd<T>(char, char, int, T*, int, real_of_t<T>*);                              \
  template int gelsy<T>(int, int, int, T*, int, T*, int, real_of_t<T>, int*);                  \
  template int gelsd<T>(int, int, int, T*, int, T*, int, real_of_t<T>*, real_of_t<T>, int*);   \
  template int gelss<T>(int, int, int, T*, int, T*, int, real_of_t<T>*, real_of_t<T>, int*);   \
  template int gels<T>(int, int, int, T*, int, T*, int);                                       \
  template int sytrf<T>(char, int, T*, int, int*);                                             \
  template int sytrs<T>(char, int, int, const T*, int, const int*, T*, int);                   \
  template int hetrf<T>(char, int, T*, int, int*);                                             \
  template int hetrs<T>(char, int, int, const T*, int, const int*, T*, int);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(C)
EMBER_INSTANTIATE(Z)
#undef EMBER_INSTANTIATE
template int geev<float>(char, int, float*, int, float*, float*, float*, int);
template int geev<double>(char, int, double*, int, double*, double*, double*, int);
template int geev<C>(char, int, C*, int, C*, C*, int);
template int geev<Z>(char, int, Z*, int, Z*, Z*, int);

}  // namespace ember::lapack
