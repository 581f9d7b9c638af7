#include "ember/ops/decompositions.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "ember/backend/cpu/lapack.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/indexing.h"
#include "ember/ops/join.h"
#include "ember/ops/lapack_batch.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape.h"
#include "ember/ops/solvers.h"
#include "ember/ops/views.h"

namespace ember {
namespace detail {

void check_linalg_input(const char* op, const Tensor& a, bool square, const char* name) {
  check_defined(op, a);
  EMBER_CHECK(a.dim() >= 2, op, ": The input tensor ", name,
              " must have at least 2 dimensions.");
  EMBER_CHECK(a.is_floating_point() || a.is_complex(), op,
              ": Expected a floating point or complex tensor as input. Got ", a.dtype());
  EMBER_CHECK(a.dtype() == kFloat32 || a.dtype() == kFloat64 || a.is_complex(), op,
              ": Low precision dtypes not supported. Got ", a.dtype());
  EMBER_CHECK(!a.is_cuda(), op, ": ember's linear algebra runs LAPACK on the CPU and has no CUDA "
              "(cuSOLVER) path yet: call it on a.cpu()");
  if (square)
    EMBER_CHECK(a.size(-1) == a.size(-2), op, ": ", name,
                " must be batches of square matrices, but they are ", a.size(-2), " by ",
                a.size(-1), " matrices");
}

int64_t batch_count(const Tensor& a) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) n *= a.size(d);
  return n;
}

Tensor column_major(const Tensor& a) {
  // One copy: contiguous() already copies unless the transpose is contiguous, i.e. a view of a
  // column-major input, which LAPACK must not overwrite.
  Tensor t = a.transpose(-2, -1).contiguous();
  return t.data_ptr() == a.data_ptr() ? t.clone() : t;
}

Tensor infos_tensor(const std::vector<int>& infos, const Tensor& a) {
  Shape batch(a.sizes().begin(), a.sizes().end() - 2);
  std::vector<int32_t> v(infos.begin(), infos.end());
  return from_vector(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt32)).reshape(batch);
}

}  // namespace detail

namespace linalg {
namespace {

using detail::batch_count;
using detail::column_major;
using detail::from_column_major;
using detail::real_options;

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }
// The conjugate transpose: the transpose of the backward formulas, right for complex too (conj
// is free on real tensors).
Tensor mH(const Tensor& t) { return conj(mT(t)); }

// The Hermitian matrix with m's strictly lower triangle and the real part of its diagonal (the
// QR backward's copyltu; for real m, the symmetric matrix with m's lower triangle).
Tensor copyltu(const Tensor& m) {
  Tensor below = tril(m, -1);
  Tensor d = diagonal(m, 0, -2, -1);
  return below + mH(below) + diag_embed(m.is_complex() ? real(d).to(m.dtype()) : d);
}

// --- Cholesky --------------------------------------------------------------------------------

std::tuple<Tensor, std::vector<int>> cholesky_lower(const char* op, const Tensor& a) {
  detail::check_linalg_input(op, a, true);
  Tensor buf = column_major(a);
  int64_t n = a.size(-1), batch = batch_count(a);
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (n > 0)
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      for (int64_t b = 0; b < batch; ++b) {
        T* m = p + b * n * n;
        infos[static_cast<size_t>(b)] = lapack::potrf<T>('L', static_cast<int>(n), m,
                                                         static_cast<int>(n));
        // potrf leaves the strict upper triangle as it found it: zeroed here, in the buffer
        // (column j holds rows 0..j-1 above the diagonal), rather than by a tril afterwards.
        for (int64_t j = 1; j < n; ++j) std::fill(m + j * n, m + j * n + j, T(0));
      }
    });
  // Column-major, as PyTorch's result (strides (1, n)).
  return {from_column_major(buf), infos};
}

// Murray's (arXiv 1602.07527), as PyTorch's cholesky_backward: gA = L^-H P L^-1 with P the
// Hermitian matrix whose lower triangle is tril(L^H gL) / 2.
Tensor cholesky_backward(const Tensor& gL, const Tensor& L) {
  Tensor phi = tril(matmul(mH(L), gL));
  phi = (phi + mH(tril(phi, -1))) * 0.5;
  Tensor ga = solve_triangular(mH(L), phi, /*upper=*/true, /*left=*/true);
  ga = solve_triangular(L, ga, /*upper=*/false, /*left=*/false);
  return ga;
}

}  // namespace

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& a, bool upper, bool check_errors) {
  EMBER_OP(cholesky_ex, a, upper, check_errors);
  Tensor l;
  std::vector<int> infos;
  {
    NoGradGuard no_grad;
    std::tie(l, infos) = cholesky_lower("linalg.cholesky", a);
  }
  if (check_errors)
    detail::check_infos("linalg.cholesky", infos, a.dim() > 2, [](int i) {
      return "The factorization could not be completed because the input is not "
             "positive-definite (the leading minor of order " +
             std::to_string(i) + " is not positive-definite).";
    });
  Tensor out = upper ? mH(l).contiguous() : l;  // A = U^H U with U = L^H
  if (any_requires_grad({&a}))
    record("LinalgCholeskyExBackward0", {&out}, {&a},
           [upper, so = SavedTensor(out, true)](const Tensor& g) {
             Tensor l = upper ? mH(so.get()) : so.get();
             return TensorList{cholesky_backward(upper ? mH(g) : g, l)};
           });
  return {out, detail::infos_tensor(infos, a)};
}

Tensor cholesky(const Tensor& a, bool upper) {
  EMBER_OP(cholesky, a, upper);
  return std::get<0>(cholesky_ex(a, upper, /*check_errors=*/true));
}

// --- LU --------------------------------------------------------------------------------------

namespace {

// A = P L U for one batch: (LU, pivots int32 1-based, infos).
std::tuple<Tensor, Tensor, std::vector<int>> lu_raw(const char* op, const Tensor& a) {
  detail::check_linalg_input(op, a, false);
  Tensor buf = column_major(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), batch = batch_count(a);
  Shape piv_shape(a.sizes().begin(), a.sizes().end() - 2);
  piv_shape.push_back(k);
  Tensor piv = empty(piv_shape, TensorOptions(kInt32));
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (m > 0 && n > 0)
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      int32_t* ip = static_cast<int32_t*>(piv.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        infos[static_cast<size_t>(b)] = lapack::getrf<T>(
            static_cast<int>(m), static_cast<int>(n), p + b * m * n,
            static_cast<int>(std::max<int64_t>(m, 1)), ip + b * k);
    });
  return {from_column_major(buf).contiguous(), piv, infos};
}

// PyTorch's linalg_lu_backward (square, wide and tall): the gradient of A = P L U from those of
// L (unit lower, m x k) and U (upper, k x n).
Tensor lu_backward(const Tensor& gL_in, const Tensor& gU_in, const Tensor& P, const Tensor& L,
                   const Tensor& U) {
  int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
  Tensor gL = gL_in.defined() ? gL_in : zeros_like(L);
  Tensor gU = gU_in.defined() ? gU_in : zeros_like(U);
  Tensor ga;
  if (m == n) {
    Tensor phi = tril(matmul(mH(L), gL), -1) + triu(matmul(gU, mH(U)));
    ga = solve_triangular(mH(L), phi, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
    ga = solve_triangular(mH(U), ga, /*upper=*/false, /*left=*/false);
  } else if (m < n) {
    Tensor u1 = U.narrow(-1, 0, k), gu1 = gU.narrow(-1, 0, k), gu2 = gU.narrow(-1, k, n - k);
    Tensor x = matmul(mH(L), gL) - matmul(triu(gU), mH(U));
    x = solve_triangular(mH(u1), tril(x, -1), /*upper=*/false, /*left=*/false);
    x = cat({x + triu(gu1), gu2}, -1);
    ga = solve_triangular(mH(L), x, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  } else {
    Tensor l1 = L.narrow(-2, 0, k), gl1 = gL.narrow(-2, 0, k), gl2 = gL.narrow(-2, k, m - k);
    Tensor x = matmul(gU, mH(U)) - matmul(mH(L), tril(gL, -1));
    x = solve_triangular(mH(l1), triu(x), /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
    x = cat({x + tril(gl1, -1), gl2}, -2);
    ga = solve_triangular(mH(U), x, /*upper=*/false, /*left=*/false);
  }
  return matmul(P, ga);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu_data, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots) {
  EMBER_OP(lu_unpack, lu_data, pivots, unpack_data, unpack_pivots);
  EMBER_CHECK(lu_data.dim() >= 2, "torch.lu_unpack: LU_data must have at least 2 dimensions");
  int64_t m = lu_data.size(-2), n = lu_data.size(-1), k = std::min(m, n);
  Tensor L, U, P;
  if (unpack_data) {
    L = tril(lu_data.narrow(-1, 0, k), -1) + eye(m, k, lu_data.options());
    U = triu(lu_data.narrow(-2, 0, k));
  }
  if (unpack_pivots) {
    EMBER_CHECK(pivots.dtype() == kInt32, "torch.lu_unpack: LU_pivots is expected to be a "
                "contiguous tensor of torch.int32 dtype. Note: this function is intended to be "
                "used with the output produced by torch.linalg.lu_factor");
    EMBER_CHECK(pivots.size(-1) == k, "torch.lu_unpack: the last dim of LU_pivots must be ", k,
                ", got ", pivots.size(-1));
    Tensor piv = pivots.contiguous();
    int64_t batch = piv.numel() / std::max<int64_t>(k, 1);
    Shape pshape(lu_data.sizes().begin(), lu_data.sizes().end() - 2);
    pshape.push_back(m);
    pshape.push_back(m);
    Tensor perm_t = empty({batch, m}, TensorOptions(kInt64));
    const int32_t* ip = static_cast<const int32_t*>(piv.data_ptr());
    int64_t* pp = static_cast<int64_t*>(perm_t.data_ptr());
    for (int64_t b = 0; b < batch; ++b) {
      int64_t* perm = pp + b * m;
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      for (int64_t i = 0; i < k; ++i) {
        int64_t j = ip[b * k + i] - 1;
        EMBER_CHECK(j >= 0 && j < m, "torch.lu_unpack: pivot ", j + 1, " is out of range [1, ",
                    m, "]");
        std::swap(perm[i], perm[j]);
      }
    }
    // P^T A = rows perm of A: P[perm[i], i] = 1.
    Tensor eye_m = eye(m, m, lu_data.options());
    P = index_select(eye_m, 0, perm_t.reshape({-1})).reshape({batch, m, m});
    P = mT(P).reshape(pshape).contiguous();
  }
  auto empty_of = [&] { return empty({0}, lu_data.options()); };
  return {unpack_pivots ? P : empty_of(), unpack_data ? L : empty_of(),
          unpack_data ? U : empty_of()};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot, bool check_errors) {
  EMBER_OP(lu_factor_ex, a, pivot, check_errors);
  EMBER_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  Tensor lu_data, piv;
  std::vector<int> infos;
  {
    NoGradGuard no_grad;
    std::tie(lu_data, piv, infos) = lu_raw("linalg.lu_factor", a);
  }
  if (check_errors)
    detail::check_infos("linalg.lu_factor", infos, a.dim() > 2, [](int i) {
      return "The factorization could not be completed because the input is not invertible: "
             "U[" + std::to_string(i) + ", " + std::to_string(i) + "] is zero.";
    });
  if (any_requires_grad({&a}))
    record("LinalgLuFactorExBackward0", {&lu_data}, {&a},
           [slu = SavedTensor(lu_data, true), piv](const Tensor& g) {
             auto [P, L, U] = lu_unpack(slu.get(), piv);
             int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
             Tensor gL = tril(g.narrow(-1, 0, k), -1), gU = triu(g.narrow(-2, 0, k));
             return TensorList{lu_backward(gL, gU, P, L, U)};
           });
  return {lu_data, piv, detail::infos_tensor(infos, a)};
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& a, bool pivot) {
  EMBER_OP(lu_factor, a, pivot);
  auto [lu_data, piv, info] = lu_factor_ex(a, pivot, /*check_errors=*/false);
  return {lu_data, piv};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a, bool pivot) {
  EMBER_OP(lu, a, pivot);
  EMBER_CHECK(pivot, "linalg.lu: LU without pivoting is not implemented on the CPU");
  Tensor P, L, U;
  {
    NoGradGuard no_grad;
    auto [lu_data, piv, infos] = lu_raw("linalg.lu", a);
    std::tie(P, L, U) = lu_unpack(lu_data, piv);
  }
  if (any_requires_grad({&a}))
    record("LinalgLuBackward0", {&L, &U}, {&a},
           [P, sl = SavedTensor(L, true), su = SavedTensor(U, true)](const TensorList& g,
                                                                   const Node&) {
             return TensorList{lu_backward(g[0], g[1], P, sl.get(), su.get())};
           });
  return {P, L, U};
}

// --- QR --------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> geqrf(const Tensor& a) {
  EMBER_OP(geqrf, a);
  detail::check_linalg_input("geqrf", a, false, "input");
  Tensor buf = column_major(a);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), batch = batch_count(a);
  Shape tshape(a.sizes().begin(), a.sizes().end() - 2);
  tshape.push_back(k);
  Tensor tau = zeros(tshape, a.options());
  if (m > 0 && n > 0)
    detail::dispatch_lapack(a.dtype(), "geqrf", [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      T* t = static_cast<T*>(tau.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        lapack::geqrf<T>(static_cast<int>(m), static_cast<int>(n), p + b * m * n,
                         static_cast<int>(std::max<int64_t>(m, 1)), t + b * k);
    });
  return {from_column_major(buf).contiguous(), tau};
}

Tensor householder_product(const Tensor& a, const Tensor& tau) {
  EMBER_OP(householder_product, a, tau);
  detail::check_linalg_input("torch.linalg.householder_product", a, false, "input");
  int64_t m = a.size(-2), n = a.size(-1), k = tau.size(-1), batch = batch_count(a);
  EMBER_CHECK(m >= n, "torch.linalg.householder_product: input.shape[-2] must be greater than or "
              "equal to input.shape[-1]");
  EMBER_CHECK(n >= k, "torch.linalg.householder_product: input.shape[-1] must be greater than or "
              "equal to tau.shape[-1]");
  EMBER_CHECK(tau.dim() == a.dim() - 1, "torch.linalg.householder_product: Expected tau to have "
              "one dimension less than input, but got tau.ndim equal to ", tau.dim(),
              " and input.ndim is equal to ", a.dim());
  EMBER_CHECK(tau.dtype() == a.dtype(), "torch.linalg.householder_product: tau dtype ",
              tau.dtype(), " does not match input dtype ", a.dtype());
  if (any_requires_grad({&a, &tau})) {
    // Under autograd, the reflectors applied one by one with differentiable ops, so that the
    // gradient is the product's: H_i = I - tau_i v_i v_i^H (v_i: A's i-th column below the
    // diagonal, 1 on it) applied to the identity's first n columns, last reflector first.
    Shape lead(a.sizes().begin(), a.sizes().end() - 2);
    Shape qshape = lead;
    qshape.push_back(m);
    qshape.push_back(n);
    Tensor eye_mn = eye(m, n, TensorOptions(a.dtype()).with_device(a.device()));
    Tensor vs = tril(a, -1) + eye_mn;
    Tensor q = eye_mn.expand(qshape);
    for (int64_t i = k - 1; i >= 0; --i) {
      Tensor v = vs.narrow(-1, i, 1);
      q = q - tau.narrow(-1, i, 1).unsqueeze(-1) * matmul(v, matmul(mH(v), q));
    }
    if (k == 0) {  // no reflector: the identity, followed with zero gradients as PyTorch's
      q = q.contiguous().clone();
      record("LinalgHouseholderProductBackward0", {&q}, {&a, &tau},
             [sa = a.sizes(), st = tau.sizes()](const Tensor& g) {
               return TensorList{zeros(sa, g.options()), zeros(st, g.options())};
             });
    }
    return q;
  }
  Tensor buf = column_major(a), t = tau.contiguous();
  if (m > 0 && n > 0)
    detail::dispatch_lapack(a.dtype(), "householder_product", [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      const T* tp = static_cast<const T*>(t.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        lapack::orgqr<T>(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                         p + b * m * n, static_cast<int>(std::max<int64_t>(m, 1)), tp + b * k);
    });
  return from_column_major(buf).contiguous();
}

Tensor ormqr(const Tensor& a, const Tensor& tau, const Tensor& c, bool left, bool transpose) {
  EMBER_OP(ormqr, a, tau, c, left, transpose);
  detail::check_linalg_input("torch.ormqr", a, false, "input");
  detail::check_linalg_input("torch.ormqr", c, false, "other");
  Tensor abuf = column_major(a), cbuf = column_major(c), t = tau.contiguous();
  int64_t am = a.size(-2), an = a.size(-1), m = c.size(-2), n = c.size(-1), k = tau.size(-1);
  int64_t batch = batch_count(c);
  EMBER_CHECK(batch_count(a) == batch, "torch.ormqr: the batch dims of input and other differ");
  EMBER_CHECK(am == (left ? m : n), "torch.ormqr: input.shape[-2] must be equal to other.shape[",
              left ? -2 : -1, "]");
  if (m > 0 && n > 0 && k > 0)
    detail::dispatch_lapack(a.dtype(), "ormqr", [&](auto zero) {
      using T = decltype(zero);
      const T* ap = static_cast<const T*>(abuf.data_ptr());
      const T* tp = static_cast<const T*>(t.data_ptr());
      T* cp = static_cast<T*>(cbuf.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        lapack::ormqr<T>(left ? 'L' : 'R', transpose ? 'T' : 'N', static_cast<int>(m),
                         static_cast<int>(n), static_cast<int>(k), ap + b * am * an,
                         static_cast<int>(std::max<int64_t>(am, 1)), tp + b * k, cp + b * m * n,
                         static_cast<int>(std::max<int64_t>(m, 1)));
    });
  return from_column_major(cbuf).contiguous();
}

namespace {

// The gradient of A = Q R (m >= n, reduced; Q m x n, R n x n): Liao et al.'s formula,
// gA = [gQ + Q copyltu(M)] R^-H with M = R gR^H - gQ^H Q.
Tensor qr_backward_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor M = zeros_like(R);
  if (gR.defined()) M = M + matmul(R, mH(gR));
  if (gQ.defined()) M = M - matmul(mH(gQ), Q);
  Tensor b = matmul(Q, copyltu(M));
  if (gQ.defined()) b = b + gQ;
  return solve_triangular(mH(R), b, /*upper=*/false, /*left=*/false);
}

}  // namespace

std::tuple<Tensor, Tensor> qr(const Tensor& a, const std::string& mode) {
  EMBER_OP(qr, a, mode);
  EMBER_CHECK_VALUE(mode == "reduced" || mode == "complete" || mode == "r",
                    "qr received unrecognized mode '", mode,
                    "' but expected one of 'reduced' (default), 'r', or 'complete'");
  detail::check_linalg_input("linalg.qr", a, false);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  Tensor Q, R;
  {
    NoGradGuard no_grad;
    auto [packed, tau] = geqrf(a);
    int64_t rows = mode == "complete" ? m : k;
    R = triu(packed.narrow(-2, 0, rows));
    if (mode != "r") {
      int64_t cols = mode == "complete" ? m : k;
      // orgqr needs m x cols input with the reflectors in the first k columns.
      Tensor base = packed.narrow(-1, 0, std::min(n, cols));
      if (cols > n) {
        Shape pad_shape = a.sizes();
        pad_shape.back() = cols - n;
        base = cat({base, zeros(pad_shape, a.options())}, -1);
      }
      Q = householder_product(base, tau);
    } else {
      Q = empty({0}, a.options());
    }
  }
  if (any_requires_grad({&a})) {
    EMBER_CHECK(mode != "r", "The derivative of linalg.qr depends on Q, which is not computed "
                "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr.");
    EMBER_CHECK(mode != "complete" || m <= n, "The QR decomposition is not differentiable when "
                "mode='complete' and nrows > ncols.");
    record("LinalgQrBackward0", {&Q, &R}, {&a},
           [sq = SavedTensor(Q, true), sr = SavedTensor(R, true), sa = SavedTensor(a), m, n](
               const TensorList& g, const Node&) {
             const Tensor &Q = sq.get(), &R = sr.get();
             if (m >= n) return TensorList{qr_backward_tall(g[0], g[1], Q, R)};
             // Wide: A = Q [R1 R2], X = Q R1 square; Y = Q R2.
             Tensor r1 = R.narrow(-1, 0, m), y = sa.get().narrow(-1, m, n - m);
             Tensor gr1, gr2;
             if (g[1].defined()) {
               gr1 = g[1].narrow(-1, 0, m);
               gr2 = g[1].narrow(-1, m, n - m);
             }
             Tensor gq = g[0];
             if (gr2.defined()) gq = gq.defined() ? gq + matmul(y, mH(gr2)) : matmul(y, mH(gr2));
             Tensor gx = qr_backward_tall(gq, gr1, Q, r1);
             Tensor gy = gr2.defined() ? matmul(Q, gr2) : zeros_like(y);
             return TensorList{cat({gx, gy}, -1)};
           });
  }
  return {Q, R};
}

// --- The symmetric eigenproblem --------------------------------------------------------------

namespace {

std::tuple<Tensor, Tensor> eigh_raw(const char* op, const Tensor& a, const std::string& uplo,
                                    bool vectors) {
  EMBER_CHECK_VALUE(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", op,
                    ": Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  detail::check_linalg_input(op, a, true);
  Tensor buf = column_major(a);
  int64_t n = a.size(-1), batch = batch_count(a);
  Shape wshape(a.sizes().begin(), a.sizes().end() - 1);
  Tensor w = empty(wshape, real_options(a));
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  char u = static_cast<char>(std::toupper(uplo[0]));
  if (n > 0)
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      auto* wp = static_cast<real_of_t<T>*>(w.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        infos[static_cast<size_t>(b)] = lapack::syevd<T>(
            vectors ? 'V' : 'N', u, static_cast<int>(n), p + b * n * n, static_cast<int>(n),
            wp + b * n);
    });
  detail::check_infos(op, infos, a.dim() > 2, [](int i) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has "
           "too many repeated eigenvalues (error code: " + std::to_string(i) + ").";
  });
  return {w, vectors ? from_column_major(buf).contiguous() : Tensor()};
}

// gA = V (diag(gL) + skew(V^H gV) / E) V^H, E_ij = L_j - L_i off the diagonal, with PyTorch's
// projection of V^H gV onto the skew-Hermitian matrices (the tangent space of V's group), so
// that a perturbation of A that is not Hermitian gets PyTorch's gradient.
Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  Tensor inner;
  if (gV.defined()) {
    Tensor e = L.unsqueeze(-2) - L.unsqueeze(-1);
    Tensor off = logical_not(eye(L.size(-1), L.size(-1), TensorOptions(kBool)));
    Tensor VhgV = matmul(mH(V), gV);
    VhgV = (VhgV - mH(VhgV)) * 0.5;
    inner = where(off, VhgV / where(off, e, ones_like(e)), zeros_like(VhgV));
  }
  if (gL.defined()) {
    Tensor d = diag_embed(gL).to(V.dtype());
    inner = inner.defined() ? inner + d : d;
  }
  if (!inner.defined()) return Tensor();
  return matmul(V, matmul(inner, mH(V)));
}

}  // namespace

std::tuple<Tensor, Tensor> eigh(const Tensor& a, const std::string& uplo) {
  EMBER_OP(eigh, a, uplo);
  Tensor w, v;
  {
    NoGradGuard no_grad;
    std::tie(w, v) = eigh_raw("linalg.eigh", a, uplo, true);
  }
  if (any_requires_grad({&a}))
    record("LinalgEighBackward0", {&w, &v}, {&a},
           [sw = SavedTensor(w, true), sv = SavedTensor(v, true)](const TensorList& g,
                                                                 const Node&) {
             return TensorList{eigh_backward(g[0], g[1], sw.get(), sv.get())};
           });
  return {w, v};
}

Tensor eigvalsh(const Tensor& a, const std::string& uplo) {
  EMBER_OP(eigvalsh, a, uplo);
  bool grad = any_requires_grad({&a});
  Tensor w, v;
  {
    NoGradGuard no_grad;
    std::tie(w, v) = eigh_raw("linalg.eigvalsh", a, uplo, grad);
  }
  if (grad)
    record("LinalgEigvalshBackward0", {&w}, {&a},
           [sw = SavedTensor(w, true), v](const Tensor& g) {
             return TensorList{eigh_backward(g, Tensor(), sw.get(), v)};
           });
  return w;
}

// --- eig -------------------------------------------------------------------------------------

namespace {
// geev on a batch of real column-major n x n matrices: eigenvalues w (batch, n) and, with vp,
// the vectors row-major (batch, n, n). geev gives a conjugate pair's vectors as two real columns
// (re, im): they are made into the pair's two complex vectors, as PyTorch's.
template <typename T>
void eig_real_batch(T* p, int64_t n, int64_t batch, Complex<T>* wp, Complex<T>* vp,
                    std::vector<int>& infos) {
  auto nn = static_cast<size_t>(n);
  int ni = static_cast<int>(n);
  std::vector<T> wr(nn), wi(nn), vr(vp ? nn * nn : 1);
  for (int64_t b = 0; b < batch; ++b) {
    infos[static_cast<size_t>(b)] = lapack::geev<T>(vp ? 'V' : 'N', ni, p + b * n * n, ni,
                                                    wr.data(), wi.data(), vr.data(), ni);
    for (int64_t j = 0; j < n; ++j) wp[b * n + j] = {wr[j], wi[j]};
    if (!vp) continue;
    Complex<T>* out = vp + b * n * n;  // row-major (n, n): out[r * n + j], vector j
    for (int64_t j = 0; j < n; ++j) {
      const T* re = vr.data() + j * n;
      if (wi[static_cast<size_t>(j)] == T(0) || j + 1 == n) {
        for (int64_t r = 0; r < n; ++r) out[r * n + j] = {re[r], T(0)};
        continue;
      }
      const T* im = re + n;
      for (int64_t r = 0; r < n; ++r) {
        out[r * n + j] = {re[r], im[r]};
        out[r * n + j + 1] = {re[r], -im[r]};
      }
      ++j;
    }
  }
}

// The same for complex matrices; the vectors come column-major, as the input.
template <typename T>
void eig_complex_batch(T* p, int64_t n, int64_t batch, T* wp, T* vp, std::vector<int>& infos) {
  int ni = static_cast<int>(n);
  T dummy = 0;
  for (int64_t b = 0; b < batch; ++b)
    infos[static_cast<size_t>(b)] = lapack::geev<T>(vp ? 'V' : 'N', ni, p + b * n * n, ni,
                                                    wp + b * n, vp ? vp + b * n * n : &dummy,
                                                    vp ? ni : 1);
}

// The eigenvalues (..., n) and, with `vectors`, the unit right eigenvectors (..., n, n) of
// square matrices (no autograd), both complex.
std::tuple<Tensor, Tensor> eig_raw(const char* op, const Tensor& a, bool vectors) {
  detail::check_linalg_input(op, a, true);
  Tensor buf = column_major(a);
  int64_t n = a.size(-1), batch = batch_count(a);
  DType c = to_complex_dtype(a.dtype());
  Tensor w = empty(Shape(a.sizes().begin(), a.sizes().end() - 1), a.options().with_dtype(c));
  Tensor v = vectors ? empty(a.sizes(), a.options().with_dtype(c)) : Tensor();
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (n > 0)
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      using CT = std::conditional_t<is_complex_v<T>, T, Complex<T>>;
      auto* wp = static_cast<CT*>(w.data_ptr());
      auto* vp = vectors ? static_cast<CT*>(v.data_ptr()) : nullptr;
      if constexpr (is_complex_v<T>)
        eig_complex_batch(p, n, batch, wp, vp, infos);
      else
        eig_real_batch(p, n, batch, wp, vp, infos);
    });
  if (vectors && a.is_complex()) v = from_column_major(v).contiguous();
  detail::check_infos(op, infos, a.dim() > 2, [](int i) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has "
           "too many repeated eigenvalues (error code: " + std::to_string(i) + ").";
  });
  return {w, v};
}

// PyTorch's linalg_eig_backward: with the off-diagonal part of
// Z = V^H gV - V^H V diag(re(V^H gV)) divided by conj(L_j - L_i) and diag(gL) on the diagonal,
// gA = V^-H Z V^H (its real part for a real A).
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                    bool real_input) {
  Tensor Vh = conj(mT(V));
  int64_t n = L.size(-1);
  Tensor inner;
  if (gV.defined()) {
    Tensor VhgV = matmul(Vh, gV);
    Tensor re_diag = real(diagonal(VhgV, 0, -2, -1));
    Tensor z = VhgV - matmul(Vh, V * re_diag.unsqueeze(-2));
    Tensor Lc = conj(L);
    Tensor e = Lc.unsqueeze(-2) - Lc.unsqueeze(-1);
    Tensor off = logical_not(eye(n, n, TensorOptions(kBool)));
    inner = where(off, z / where(off, e, ones_like(e)), zeros_like(z));
  }
  if (gL.defined()) inner = inner.defined() ? inner + diag_embed(gL) : diag_embed(gL);
  if (!inner.defined()) return Tensor();
  Tensor ga = solve(Vh, matmul(inner, Vh));
  return real_input ? real(ga) : ga;
}
}  // namespace

std::tuple<Tensor, Tensor> eig(const Tensor& a) {
  EMBER_OP(eig, a);
  Tensor w, v;
  {
    NoGradGuard no_grad;
    std::tie(w, v) = eig_raw("linalg.eig", a, true);
  }
  if (any_requires_grad({&a}))
    record("LinalgEigBackward0", {&w, &v}, {&a},
           [sw = SavedTensor(w, true), sv = SavedTensor(v, true), re = !a.is_complex()](
               const TensorList& g, const Node&) {
             return TensorList{eig_backward(g[0], g[1], sw.get(), sv.get(), re)};
           });
  return {w, v};
}

Tensor eigvals(const Tensor& a) {
  EMBER_OP(eigvals, a);
  bool grad = any_requires_grad({&a});
  Tensor w, v;
  {
    NoGradGuard no_grad;
    std::tie(w, v) = eig_raw("linalg.eigvals", a, grad);
  }
  if (grad)
    record("LinalgEigBackward0", {&w}, {&a},
           [sw = SavedTensor(w, true), v, re = !a.is_complex()](const Tensor& g) {
             return TensorList{eig_backward(g, Tensor(), sw.get(), v, re)};
    });
  return w;
}

// --- SVD -------------------------------------------------------------------------------------

namespace {

// (U, S, Vh) of each matrix by gesdd; jobz 'N', 'S' or 'A'.
std::tuple<Tensor, Tensor, Tensor> svd_raw(const char* op, const Tensor& a, char jobz) {
  detail::check_linalg_input(op, a, false);
  int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), batch = batch_count(a);
  Shape batch_shape(a.sizes().begin(), a.sizes().end() - 2);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape s = batch_shape;
    for (int64_t t : tail) s.push_back(t);
    return s;
  };
  int64_t ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  Tensor s = empty(with({k}), real_options(a));
  // U column-major (m x ucols) is a row-major (ucols, m) block; Vh (vrows x n) likewise (n, vrows).
  Tensor u = jobz == 'N' ? Tensor() : empty(with({ucols, m}), a.options());
  Tensor vt = jobz == 'N' ? Tensor() : empty(with({n, vrows}), a.options());
  Tensor buf = column_major(a);
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (m > 0 && n > 0) {
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      auto* sp = static_cast<real_of_t<T>*>(s.data_ptr());
      T* up = jobz == 'N' ? nullptr : static_cast<T*>(u.data_ptr());
      T* vp = jobz == 'N' ? nullptr : static_cast<T*>(vt.data_ptr());
      T dummy = 0;
      for (int64_t b = 0; b < batch; ++b)
        infos[static_cast<size_t>(b)] = lapack::gesdd<T>(
            jobz, static_cast<int>(m), static_cast<int>(n), p + b * m * n, static_cast<int>(m),
            sp + b * k, up ? up + b * m * ucols : &dummy, static_cast<int>(m),
            vp ? vp + b * vrows * n : &dummy, static_cast<int>(std::max<int64_t>(vrows, 1)));
    });
  } else if (jobz == 'A') {
    // An empty matrix: the identity's columns are its singular vectors.
    u = mT(eye(m, m, a.options()).expand(with({m, m}))).contiguous();
    vt = mT(eye(n, n, a.options()).expand(with({n, n}))).contiguous();
  } else if (jobz != 'N') {
    u = zeros(with({ucols, m}), a.options());
    vt = zeros(with({n, vrows}), a.options());
  }
  detail::check_infos(op, infos, a.dim() > 2, [](int) {
    return std::string("The algorithm failed to converge because the input matrix is "
                       "ill-conditioned or has too many repeated singular values.");
  });
  if (jobz == 'N') return {Tensor(), s, Tensor()};
  return {from_column_major(u).contiguous(), s, from_column_major(vt).contiguous()};
}

Tensor skew(const Tensor& x) { return x - mH(x); }

// PyTorch's svd_backward: from the gradients of U (m x k), S and Vh (k x n) of the reduced SVD;
// full matrices are narrowed to k first.
Tensor svd_backward(Tensor gU, const Tensor& gS, Tensor gVh, Tensor U, const Tensor& S,
                    Tensor Vh) {
  int64_t m = U.size(-2), n = Vh.size(-1), k = S.size(-1);
  if (U.size(-1) != k) {
    U = U.narrow(-1, 0, k);
    if (gU.defined()) gU = gU.narrow(-1, 0, k);
  }
  if (Vh.size(-2) != k) {
    Vh = Vh.narrow(-2, 0, k);
    if (gVh.defined()) gVh = gVh.narrow(-2, 0, k);
  }
  if (!gU.defined() && !gVh.defined()) {
    if (!gS.defined()) return Tensor();
    return m >= n ? matmul(U, gS.unsqueeze(-1) * Vh) : matmul(U * gS.unsqueeze(-2), Vh);
  }
  Tensor UhgU = gU.defined() ? skew(matmul(mH(U), gU)) : Tensor();
  Tensor VhgV = gVh.defined() ? skew(matmul(Vh, mH(gVh))) : Tensor();
  Tensor S2 = S * S;
  Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1);
  Tensor off = logical_not(eye(k, k, TensorOptions(kBool)));
  E = where(off, E, ones_like(E));
  Tensor ret;
  if (gU.defined() && gVh.defined())
    ret = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E;
  else if (gU.defined())
    ret = (UhgU / E) * S.unsqueeze(-2);
  else
    ret = S.unsqueeze(-1) * (VhgV / E);
  ret = where(off, ret, scalar_tensor(0, ret.options()));
  if (gS.defined()) ret = ret + diag_embed(gS);
  // The phase of complex singular vectors: i Im(diag(U^H gU)) / S, grouped as PyTorch's.
  if (U.is_complex() && gU.defined() && gVh.defined())
    ret = ret + diag_embed(diagonal(UhgU, 0, -2, -1) / (S * 2.0));
  Tensor ga;
  if (m > k && gU.defined()) {
    ga = matmul(U, ret);
    Tensor gUSinv = gU / S.unsqueeze(-2);
    ga = ga + gUSinv - matmul(U, matmul(mH(U), gUSinv));
    ga = matmul(ga, Vh);
  } else if (n > k && gVh.defined()) {
    ga = matmul(ret, Vh);
    Tensor SinvgVh = gVh / S.unsqueeze(-1);
    ga = ga + SinvgVh - matmul(matmul(SinvgVh, mH(Vh)), Vh);
    ga = matmul(U, ga);
  } else {
    ga = m >= n ? matmul(U, matmul(ret, Vh)) : matmul(matmul(U, ret), Vh);
  }
  return ga;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices) {
  EMBER_OP(svd, a, full_matrices);
  Tensor U, S, Vh;
  {
    NoGradGuard no_grad;
    std::tie(U, S, Vh) = svd_raw("linalg.svd", a, full_matrices ? 'A' : 'S');
  }
  if (any_requires_grad({&a}))
    record("LinalgSvdBackward0", {&U, &S, &Vh}, {&a},
           [su = SavedTensor(U, true), ss = SavedTensor(S, true), sv = SavedTensor(Vh, true)](
               const TensorList& g, const Node&) {
             return TensorList{svd_backward(g[0], g[1], g[2], su.get(), ss.get(), sv.get())};
           });
  return {U, S, Vh};
}

Tensor svdvals(const Tensor& a) {
  EMBER_OP(svdvals, a);
  bool grad = any_requires_grad({&a});
  Tensor U, S, Vh;
  {
    NoGradGuard no_grad;
    std::tie(U, S, Vh) = svd_raw("linalg.svdvals", a, grad ? 'S' : 'N');
  }
  if (grad)
    record("LinalgSvdvalsBackward0", {&S}, {&a}, [U, Vh, ss = SavedTensor(S, true)](const Tensor& g) {
      return TensorList{svd_backward(Tensor(), g, Tensor(), U, ss.get(), Vh)};
    });
  return S;
}

// --- LDL^T -----------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& a, bool hermitian,
                                                 bool check_errors) {
  EMBER_OP(ldl_factor_ex, a, hermitian, check_errors);
  detail::check_linalg_input("torch.linalg.ldl_factor_ex", a, true);
  Tensor buf = column_major(a);
  int64_t n = a.size(-1), batch = batch_count(a);
  Shape pshape(a.sizes().begin(), a.sizes().end() - 1);
  Tensor piv = zeros(pshape, TensorOptions(kInt32));
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (n > 0)
    detail::dispatch_lapack(a.dtype(), "ldl_factor", [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(buf.data_ptr());
      int32_t* ip = static_cast<int32_t*>(piv.data_ptr());
      for (int64_t b = 0; b < batch; ++b)
        infos[static_cast<size_t>(b)] =
            hermitian ? lapack::hetrf<T>('L', static_cast<int>(n), p + b * n * n,
                                         static_cast<int>(n), ip + b * n)
                      : lapack::sytrf<T>('L', static_cast<int>(n), p + b * n * n,
                                         static_cast<int>(n), ip + b * n);
    });
  if (check_errors)
    detail::check_infos("torch.linalg.ldl_factor_ex", infos, a.dim() > 2, [](int i) {
      return "The factorization could not be completed because the input is singular: D[" +
             std::to_string(i) + "," + std::to_string(i) + "] is zero.";
    });
  return {tril(from_column_major(buf)).contiguous(), piv, detail::infos_tensor(infos, a)};
}

std::tuple<Tensor, Tensor> ldl_factor(const Tensor& a, bool hermitian) {
  EMBER_OP(ldl_factor, a, hermitian);
  auto [ld, piv, info] = ldl_factor_ex(a, hermitian, /*check_errors=*/true);
  return {ld, piv};
}

}  // namespace linalg
}  // namespace ember
