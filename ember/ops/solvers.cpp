#include "ember/ops/solvers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/backend/cpu/lapack.h"
#include "ember/ops/autograd_support.h"
#include "ember/ops/complex.h"
#include "ember/ops/decompositions.h"
#include "ember/ops/dispatch.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/factory.h"
#include "ember/ops/join.h"
#include "ember/ops/lapack_batch.h"
#include "ember/ops/linalg.h"
#include "ember/ops/op_entry.h"
#include "ember/ops/pad.h"
#include "ember/ops/pointwise.h"
#include "ember/ops/reduce.h"
#include "ember/ops/shape.h"
#include "ember/ops/sort.h"
#include "ember/ops/views.h"

namespace ember::linalg {
namespace {

using detail::batch_count;
using detail::column_major;
using detail::from_column_major;

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }
// The conjugate transpose: the backward formulas' transposes, right for complex too.
Tensor mH(const Tensor& t) { return conj(mT(t)); }

Shape batch_of(const Tensor& t, int64_t tail) {
  return Shape(t.sizes().begin(), t.sizes().end() - tail);
}
Shape concat(Shape s, std::initializer_list<int64_t> tail) {
  for (int64_t t : tail) s.push_back(t);
  return s;
}

// B is a batch of vectors (not matrices) for A: PyTorch's rule.
bool vector_case(const Tensor& a, const Tensor& b) {
  if (b.dim() == 1) return true;
  return b.dim() == a.dim() - 1 && b.sizes() == Shape(a.sizes().begin(), a.sizes().end() - 1);
}

// A X = B for A (..., n, n), B (..., n, k) with the same batch (no autograd): LAPACK's getrf
// and getrs per matrix; the infos say which matrices were singular.
std::tuple<Tensor, std::vector<int>> solve_raw(const char* op, const Tensor& a, const Tensor& b) {
  Tensor abuf = column_major(a), bbuf = column_major(b);
  int64_t n = a.size(-1), k = b.size(-1), batch = batch_count(a);
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (n > 0 && k > 0)
    detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      T* ap = static_cast<T*>(abuf.data_ptr());
      T* bp = static_cast<T*>(bbuf.data_ptr());
      std::vector<int> piv(static_cast<size_t>(n));
      int ni = static_cast<int>(n);
      for (int64_t i = 0; i < batch; ++i) {
        int info = lapack::getrf<T>(ni, ni, ap + i * n * n, ni, piv.data());
        infos[static_cast<size_t>(i)] = info;
        if (info == 0)
          lapack::getrs<T>('N', ni, static_cast<int>(k), ap + i * n * n, ni, piv.data(),
                           bp + i * n * k, ni);
      }
    });
  return {from_column_major(bbuf), infos};
}

std::string singular_message(const char* what, int i) {
  return "The diagonal element " + std::to_string(i) + " is zero, the " + what +
         " could not be completed because the input matrix is singular.";
}

// Expands A (..., n, n) and B (..., n, k) to one batch shape.
std::tuple<Tensor, Tensor> broadcast_batches(const char* op, const Tensor& a, const Tensor& b) {
  Shape batch = broadcast_shapes(batch_of(a, 2), batch_of(b, 2), op);
  return {a.expand(concat(batch, {a.size(-2), a.size(-1)})),
          b.expand(concat(batch, {b.size(-2), b.size(-1)}))};
}

}  // namespace

// --- solve -----------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left,
                                    bool check_errors) {
  EMBER_OP(solve_ex, a, b, left, check_errors);
  const char* op = "linalg.solve";
  detail::check_linalg_input(op, a, true, "A");
  EMBER_CHECK(b.dtype() == a.dtype(), op, ": Expected A and B to have the same dtype, but found "
              "A of type ", a.dtype(), " and B of type ", b.dtype(), " instead");
  bool vec = vector_case(a, b);
  Tensor bm = vec ? b.unsqueeze(-1) : b;
  EMBER_CHECK(bm.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  int64_t n = a.size(-1);
  EMBER_CHECK(bm.size(left ? -2 : -1) == n, op, ": Incompatible shapes of A and B for the "
              "equation ", left ? "AX = B" : "XA = B", " (", a.size(-2), "x", a.size(-1), " and ",
              bm.size(-2), "x", bm.size(-1), ")");
  Tensor x;
  std::vector<int> infos;
  {
    NoGradGuard no_grad;
    // X A = B is A^T X^T = B^T.
    auto [ab, bb] = left ? broadcast_batches(op, a, bm) : broadcast_batches(op, mT(a), mT(bm));
    std::tie(x, infos) = solve_raw(op, ab, bb);
    if (!left) x = mT(x);
    x = x.contiguous();
    if (vec) x = x.squeeze(-1);
  }
  if (check_errors)
    detail::check_infos(op, infos, a.dim() > 2,
                        [](int i) { return singular_message("solve", i); });
  if (any_requires_grad({&a, &b}))
    record("LinalgSolveExBackward0", {&x}, {&a, &b},
           [sa = SavedTensor(a), sx = SavedTensor(x, true), left, vec](const Tensor& g,
                                                                     const Node& node) {
             const Tensor &A = sa.get(), &X = sx.get();
             Tensor gm = vec ? g.unsqueeze(-1) : g, xm = vec ? X.unsqueeze(-1) : X;
             // left: gB = A^-T gX, gA = -gB X^T; right: gB = gX A^-T, gA = -X^T gB.
             Tensor gb = solve(mH(A), gm, left);
             Tensor ga;
             if (node.needs_input_grad(0))
               ga = sum_to(left ? -matmul(gb, mH(xm)) : -matmul(mH(xm), gb), A.sizes());
             Tensor gbo = vec ? gb.squeeze(-1) : gb;
             return TensorList{ga, node.needs_input_grad(1) ? gbo : Tensor()};
           });
  return {x, detail::infos_tensor(infos, a)};
}

Tensor solve(const Tensor& a, const Tensor& b, bool left) {
  EMBER_OP(solve, a, b, left);
  return std::get<0>(solve_ex(a, b, left, /*check_errors=*/true));
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular) {
  EMBER_OP(solve_triangular, a, b, upper, left, unitriangular);
  const char* op = "linalg.solve_triangular";
  detail::check_linalg_input(op, a, true);
  EMBER_CHECK(b.dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  EMBER_CHECK(b.dtype() == a.dtype(), op, ": Expected A and B to have the same dtype, but found "
              "A of type ", a.dtype(), " and B of type ", b.dtype(), " instead");
  int64_t n = a.size(-1);
  EMBER_CHECK(b.size(left ? -2 : -1) == n, op, ": Incompatible shapes of A and B for the "
              "equation ", left ? "AX = B" : "XA = B", " (", a.size(-2), "x", a.size(-1), " and ",
              b.size(-2), "x", b.size(-1), ")");
  Tensor x;
  {
    NoGradGuard no_grad;
    // X A = B is A^T X^T = B^T (A^T triangular the other way).
    auto [ab, bb] = left ? broadcast_batches(op, a, b) : broadcast_batches(op, mT(a), mT(b));
    bool up = left ? upper : !upper;
    Tensor abuf = column_major(ab), bbuf = column_major(bb);
    int64_t k = bb.size(-1), batch = batch_count(ab);
    if (n > 0 && k > 0)
      detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
        using T = decltype(zero);
        const T* ap = static_cast<const T*>(abuf.data_ptr());
        T* bp = static_cast<T*>(bbuf.data_ptr());
        int ni = static_cast<int>(n);
        for (int64_t i = 0; i < batch; ++i)
          // A zero on the diagonal gives inf/NaN, as PyTorch's trsm; trtrs would refuse.
          lapack::trtrs<T>(up ? 'U' : 'L', 'N', unitriangular ? 'U' : 'N', ni,
                           static_cast<int>(k), ap + i * n * n, ni, bp + i * n * k, ni);
      });
    x = from_column_major(bbuf);
    if (!left) x = mT(x);
    x = x.contiguous();
  }
  if (any_requires_grad({&a, &b}))
    record("LinalgSolveTriangularBackward0", {&x}, {&a, &b},
           [sa = SavedTensor(a), sx = SavedTensor(x, true), upper, left, unitriangular](
               const Tensor& g, const Node& node) {
             const Tensor &A = sa.get(), &X = sx.get();
             Tensor gb = solve_triangular(mH(A), g, !upper, left, unitriangular);
             Tensor ga;
             if (node.needs_input_grad(0)) {
               ga = left ? -matmul(gb, mH(X)) : -matmul(mH(X), gb);
               ga = upper ? triu(ga, unitriangular ? 1 : 0) : tril(ga, unitriangular ? -1 : 0);
               ga = sum_to(ga, A.sizes());
             }
             return TensorList{ga, node.needs_input_grad(1) ? gb : Tensor()};
           });
  return x;
}

namespace {
// P^T B for the permutation of lu_factor's pivots.
Tensor permute_rows(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool inverse) {
  auto [P, L, U] = lu_unpack(lu, pivots, /*unpack_data=*/false, /*unpack_pivots=*/true);
  return matmul(inverse ? mT(P) : P, b);
}
}  // namespace

Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint) {
  EMBER_OP(lu_solve, lu, pivots, b, left, adjoint);
  detail::check_linalg_input("linalg.lu_solve", lu, true, "LU");
  EMBER_CHECK(b.dim() >= 2, "linalg.lu_solve: The input tensor B must have at least 2 "
              "dimensions.");
  // A = P L U, with L and U taken from LU differentiably (lu_unpack's pieces are narrowings).
  int64_t n = lu.size(-1);
  Tensor L = tril(lu, -1) + eye(n, n, lu.options()), U = triu(lu);
  if (left && !adjoint) {  // X = U^-1 L^-1 P^T B
    Tensor y = permute_rows(lu, pivots, b, /*inverse=*/true);
    y = solve_triangular(L, y, false, true, true);
    return solve_triangular(U, y, true, true);
  }
  if (left) {  // A^H X = B: U^H L^H P^T X = B -> X = P L^-H U^-H B
    Tensor y = solve_triangular(mH(U), b, false, true);
    y = solve_triangular(mH(L), y, true, true, true);
    return permute_rows(lu, pivots, y, /*inverse=*/false);
  }
  if (!adjoint) {  // X A = B: X P L U = B -> X = B U^-1 L^-1 P^T
    Tensor y = solve_triangular(U, b, true, false);
    y = solve_triangular(L, y, false, false, true);
    return mT(permute_rows(lu, pivots, mT(y), /*inverse=*/false));
  }
  // X A^H = B: X U^H L^H P^T = B -> X = B P L^-H U^-H
  Tensor y = mT(permute_rows(lu, pivots, mT(b), /*inverse=*/true));
  y = solve_triangular(mH(L), y, true, false, true);
  return solve_triangular(mH(U), y, false, false);
}

Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper) {
  EMBER_OP(cholesky_solve, b, l, upper);
  detail::check_linalg_input("cholesky_solve", l, true, "input2");
  Tensor x;
  {
    NoGradGuard no_grad;
    // A = L L^H (or U^H U): X = L^-H L^-1 B.
    Tensor lower = upper ? mH(l) : l;
    x = solve_triangular(mH(lower), solve_triangular(lower, b, false, true), true, true);
  }
  // PyTorch's formulas, which differentiate in every entry of L as cholesky_inverse's:
  // gB = A^-1 gX, gL = -(gB X^H + X gB^H) L (or -U (...)).
  if (any_requires_grad({&b, &l}))
    record("CholeskySolveBackward0", {&x}, {&b, &l},
           [bsizes = b.sizes(), sl = SavedTensor(l), sx = SavedTensor(x, true), upper](
               const Tensor& g, const Node& node) {
             const Tensor &L = sl.get(), &X = sx.get();
             Tensor gb = cholesky_solve(g, L, upper), gl;
             if (node.needs_input_grad(1)) {
               Tensor common = matmul(gb, mH(X));
               common = common + mH(common);
               gl = sum_to(upper ? -matmul(L, common) : -matmul(common, L), L.sizes());
             }
             return TensorList{node.needs_input_grad(0) ? sum_to(gb, bsizes) : Tensor(), gl};
           });
  return x;
}

Tensor cholesky_inverse(const Tensor& l, bool upper) {
  EMBER_OP(cholesky_inverse, l, upper);
  detail::check_linalg_input("cholesky_inverse", l, true, "input");
  int64_t n = l.size(-1);
  Tensor x;
  {
    NoGradGuard no_grad;
    x = cholesky_solve(eye(n, n, l.options()).expand(l.sizes()), l, upper);
  }
  // PyTorch's formula, which differentiates (L L^H)^-1 in every entry of L (the other triangle
  // too, though the forward never reads it): gL = -X (G + G^H) X L, or -U X (G + G^H) X.
  if (any_requires_grad({&l}))
    record("CholeskyInverseBackward0", {&x}, {&l},
           [sl = SavedTensor(l), sx = SavedTensor(x, true), upper](const Tensor& g) {
             const Tensor &L = sl.get(), &X = sx.get();
             Tensor common = matmul(X, matmul(g + mH(g), X));
             return TensorList{upper ? -matmul(L, common) : -matmul(common, L)};
           });
  return x;
}

Tensor ldl_solve(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian) {
  EMBER_OP(ldl_solve, ld, pivots, b, hermitian);
  const char* op = "torch.linalg.ldl_solve";
  detail::check_linalg_input(op, ld, true, "LD");
  EMBER_CHECK(b.dim() >= 2, op, ": B must have at least 2 dimensions");
  auto [ab, bb] = broadcast_batches(op, ld, b);
  Tensor abuf = column_major(ab), bbuf = column_major(bb);
  Tensor piv = pivots.expand(Shape(ab.sizes().begin(), ab.sizes().end() - 1)).contiguous();
  int64_t n = ld.size(-1), k = bb.size(-1), batch = batch_count(ab);
  if (n > 0 && k > 0)
    detail::dispatch_lapack(ld.dtype(), op, [&](auto zero) {
      using T = decltype(zero);
      const T* ap = static_cast<const T*>(abuf.data_ptr());
      T* bp = static_cast<T*>(bbuf.data_ptr());
      const int32_t* ip = static_cast<const int32_t*>(piv.data_ptr());
      int ni = static_cast<int>(n);
      for (int64_t i = 0; i < batch; ++i)
        if (hermitian)
          lapack::hetrs<T>('L', ni, static_cast<int>(k), ap + i * n * n, ni, ip + i * n,
                           bp + i * n * k, ni);
        else
          lapack::sytrs<T>('L', ni, static_cast<int>(k), ap + i * n * n, ni, ip + i * n,
                           bp + i * n * k, ni);
    });
  return from_column_major(bbuf).contiguous();
}

// --- inverse and determinants ----------------------------------------------------------------

std::tuple<Tensor, Tensor> inv_ex(const Tensor& a, bool check_errors) {
  EMBER_OP(inv_ex, a, check_errors);
  detail::check_linalg_input("linalg.inv", a, true, "A");
  int64_t n = a.size(-1);
  Tensor x;
  std::vector<int> infos;
  {
    NoGradGuard no_grad;
    std::tie(x, infos) = solve_raw("linalg.inv", a, eye(n, n, a.options()).expand(a.sizes()));
    x = x.contiguous();
  }
  if (check_errors)
    detail::check_infos("linalg.inv", infos, a.dim() > 2,
                        [](int i) { return singular_message("inversion", i); });
  if (any_requires_grad({&a}))
    record("LinalgInvExBackward0", {&x}, {&a}, [sx = SavedTensor(x, true)](const Tensor& g) {
      const Tensor& X = sx.get();  // gA = -X^H gX X^H
      return TensorList{-matmul(mH(X), matmul(g, mH(X)))};
    });
  return {x, detail::infos_tensor(infos, a)};
}

Tensor inv(const Tensor& a) {
  EMBER_OP(inv, a);
  return std::get<0>(inv_ex(a, /*check_errors=*/true));
}

namespace {

// The sign (+1 or -1) of the permutation of lu_factor's pivots, in dtype.
Tensor permutation_sign(const Tensor& piv, int64_t n, DType dtype) {
  Tensor swaps = ne(piv, arange(1, n + 1, 1, TensorOptions(kInt32))).to(kInt64).sum(Dims{-1});
  return 1.0 - remainder(swaps, 2).to(dtype) * 2.0;
}

// (sign, log |det|) of each matrix from its LU factors (no autograd); the sign of a complex
// determinant is det / |det|, log |det| is real.
std::tuple<Tensor, Tensor> slogdet_raw(const char* op, const Tensor& a) {
  detail::check_linalg_input(op, a, true);
  auto [lu_data, piv, info] = lu_factor_ex(a.detach());
  Tensor diag = diagonal(lu_data, 0, -2, -1);
  Tensor sign = mul(prod(sgn(diag), -1), permutation_sign(piv, a.size(-1), a.dtype()));
  Tensor logabs = sum(log(abs(diag)), Dims{-1});
  return {sign, logabs};
}

}  // namespace

Tensor det(const Tensor& a) {
  EMBER_OP(det, a);
  Tensor out;
  {
    NoGradGuard no_grad;
    detail::check_linalg_input("linalg.det", a, true);
    auto [lu_data, piv, info] = lu_factor_ex(a);
    out = prod(diagonal(lu_data, 0, -2, -1), -1) * permutation_sign(piv, a.size(-1), a.dtype());
  }
  if (any_requires_grad({&a}))
    // The conjugate of the cofactor matrix, from the SVD so that it is right for singular A as
    // well: conj(cof(A)) = conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh.
    record("LinalgDetBackward0", {&out}, {&a}, [sa = SavedTensor(a)](const Tensor& g) {
      const Tensor& A = sa.get();
      if (A.numel() == 0) return TensorList{zeros_like(A)};
      auto [U, S, Vh] = svd(A, /*full_matrices=*/false);
      int64_t n = S.size(-1);
      // prod over j != i by prefix and suffix products.
      Tensor ones_col = ones_like(S.narrow(-1, 0, 1));
      Tensor prefix = cat({ones_col, cumprod(S, -1).narrow(-1, 0, n - 1)}, -1);
      Tensor suffix = cat({flip(cumprod(flip(S, {-1}), -1), {-1}).narrow(-1, 1, n - 1), ones_col},
                          -1);
      Tensor others = prefix * suffix;
      Tensor sign = conj(det(U) * det(Vh));
      Tensor cof = matmul(U * (others * sign.unsqueeze(-1)).unsqueeze(-2), Vh);
      return TensorList{g.unsqueeze(-1).unsqueeze(-1) * cof};
    });
  return out;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& a) {
  EMBER_OP(slogdet, a);
  Tensor sign, logabs;
  {
    NoGradGuard no_grad;
    std::tie(sign, logabs) = slogdet_raw("linalg.slogdet", a);
  }
  if (any_requires_grad({&a}))
    // The sign is an output of the node too (its gradient is 0 for real A), as PyTorch's.
    record("LinalgSlogdetBackward0", {&sign, &logabs}, {&a},
           [sa = SavedTensor(a), ss = SavedTensor(sign, true)](const TensorList& g,
                                                                const Node&) {
             // With d = tr(A^-1 dA): d log|det A| = re d and d sign = i sign im d, so
             // gA = c A^-H with c = g_logabs - i im(conj(g_sign) sign) (g_logabs for real A).
             const Tensor& A = sa.get();
             Tensor c = g[1].defined() ? g[1] : zeros_like(real(ss.get()));
             if (A.is_complex() && g[0].defined())
               c = c - complex(zeros_like(c), imag(conj(g[0]) * ss.get()));
             else if (!g[1].defined())
               return TensorList{zeros_like(A)};
             return TensorList{c.unsqueeze(-1).unsqueeze(-1) * mH(inv(A))};
           });
  return {sign, logabs};
}

Tensor logdet(const Tensor& a) {
  EMBER_OP(logdet, a);
  auto [sign, logabs] = slogdet(a);
  // log det = log |det| + i arg det for complex A; a real A with a negative det has none (NaN).
  if (a.is_complex()) return logabs + log(sign);
  return where(lt(sign, 0), scalar_tensor(std::numeric_limits<double>::quiet_NaN(), logabs.options()),
               logabs);
}

// --- least squares, pseudo-inverse, rank -----------------------------------------------------

namespace {

double default_rtol(const Tensor& a) {
  double eps = to_real_dtype(a.dtype()) == kFloat32 ? std::numeric_limits<float>::epsilon()
                                     : std::numeric_limits<double>::epsilon();
  return eps * static_cast<double>(std::max(a.size(-2), a.size(-1)));
}

// max(atol, rtol * largest) for each matrix of a, as (*batch, 1), from its singular values (or
// absolute eigenvalues) s. PyTorch's rule: rtol defaults to eps * max(m, n) unless atol is given
// and positive, then to 0.
Tensor threshold(const Tensor& a, const Tensor& s, const Tensor& atol, const Tensor& rtol) {
  TensorOptions o = s.options();
  Tensor at = atol.defined() ? atol.to(s.dtype()) : zeros({}, o);
  Tensor rt = rtol.defined() ? rtol.to(s.dtype()) : full({}, default_rtol(a), o);
  if (!rtol.defined() && atol.defined()) rt = where(gt(at, 0.0), zeros({}, o), rt);
  return maximum(at.unsqueeze(-1), amax(s, Dims{-1}, true) * rt.unsqueeze(-1));
}

Tensor optional_scalar(std::optional<double> v) {
  return v ? scalar_tensor(*v, TensorOptions(kFloat64)) : Tensor();
}

// Golub and Pereyra's derivative of the pseudo-inverse P of A, as PyTorch's pinv_backward:
// gA = -P^H gP P^H + (I - A P) gP^H P P^H + P^H P gP^H (I - P A).
Tensor pinv_backward(const Tensor& gP, const Tensor& P, const Tensor& A) {
  int64_t m = A.size(-2), n = A.size(-1);
  Tensor first = -matmul(mH(P), matmul(gP, mH(P)));
  Tensor im = eye(m, m, A.options()) - matmul(A, P);
  Tensor in = eye(n, n, A.options()) - matmul(P, A);
  return first + matmul(im, matmul(mH(gP), matmul(P, mH(P)))) +
         matmul(matmul(mH(P), P), matmul(mH(gP), in));
}

}  // namespace

Tensor pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol,
            bool hermitian) {
  return pinv(a, optional_scalar(atol), optional_scalar(rtol), hermitian);
}

Tensor pinv(const Tensor& a, const Tensor& atol, const Tensor& rtol, bool hermitian) {
  EMBER_OP(pinv, a, atol, rtol, hermitian);
  detail::check_linalg_input("linalg.pinv", a, hermitian);
  Tensor p;
  {
    NoGradGuard no_grad;
    if (a.numel() == 0) {
      p = zeros(concat(batch_of(a, 2), {a.size(-1), a.size(-2)}), a.options());
    } else if (hermitian) {
      auto [w, v] = eigh(a);
      Tensor absw = abs(w);
      Tensor inv_w = where(gt(absw, threshold(a, absw, atol, rtol)), 1.0 / w,
                           scalar_tensor(0, w.options()));
      p = matmul(v * inv_w.unsqueeze(-2), mH(v));
    } else {
      auto [U, S, Vh] = svd(a, /*full_matrices=*/false);
      Tensor inv_s = where(gt(S, threshold(a, S, atol, rtol)), 1.0 / S,
                           scalar_tensor(0, S.options()));
      p = matmul(mH(Vh) * inv_s.unsqueeze(-2), mH(U));
    }
  }
  if (any_requires_grad({&a}))
    record("LinalgPinvBackward0", {&p}, {&a},
           [sa = SavedTensor(a), sp = SavedTensor(p, true)](const Tensor& g) {
             return TensorList{pinv_backward(g, sp.get(), sa.get())};
           });
  return p;
}

Tensor matrix_rank(const Tensor& a, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  return matrix_rank(a, optional_scalar(atol), optional_scalar(rtol), hermitian);
}

Tensor matrix_rank(const Tensor& a, const Tensor& atol, const Tensor& rtol, bool hermitian) {
  EMBER_OP(matrix_rank, a, atol, rtol, hermitian);
  detail::check_linalg_input("torch.linalg.matrix_rank", a, hermitian);
  NoGradGuard no_grad;
  if (a.size(-1) == 0 || a.size(-2) == 0) return zeros(batch_of(a, 2), TensorOptions(kInt64));
  Tensor s = hermitian ? abs(eigvalsh(a)) : svdvals(a);
  return gt(s, threshold(a, s, atol, rtol)).to(kInt64).sum(Dims{-1});
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& a, const Tensor& b,
                                                 std::optional<double> rcond,
                                                 const std::string& driver_in) {
  EMBER_OP(lstsq, a, b, rcond, driver_in);
  const char* op = "torch.linalg.lstsq";
  detail::check_linalg_input(op, a, false);
  EMBER_CHECK(b.dim() >= 1, op, ": input.dim() must be greater or equal to other.dim() and "
              "(input.dim() - other.dim()) <= 1");
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": Expected input and other to have the same dtype, "
              "but got input's dtype ", a.dtype(), " and other's dtype ", b.dtype());
  std::string driver = driver_in.empty() ? "gelsy" : driver_in;
  EMBER_CHECK_VALUE(driver == "gelsy" || driver == "gels" || driver == "gelsd" ||
                        driver == "gelss",
                    op, ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  bool vec = b.dim() == a.dim() - 1;
  Tensor bm = vec ? b.unsqueeze(-1) : b;
  EMBER_CHECK(bm.dim() == a.dim(), op, ": input.dim() must be greater or equal to other.dim() "
              "and (input.dim() - other.dim()) <= 1");
  int64_t m = a.size(-2), n = a.size(-1), k = bm.size(-1);
  EMBER_CHECK(bm.size(-2) == m, op, ": input.size(-2) should match other.size(-2)");
  double rc = rcond.value_or(default_rtol(a));
  Tensor x, residuals, rank, svals;
  {
    NoGradGuard no_grad;
    auto [ab, bb] = broadcast_batches(op, a, bm);
    int64_t rows = std::max(m, n), batch_n = batch_count(ab);
    Tensor abuf = column_major(ab);
    // B padded to max(m, n) rows, column-major: a (..., k, rows) buffer.
    Tensor bpad = pad(bb, {0, 0, 0, rows - m});
    Tensor bbuf = column_major(bpad);
    Shape batch = batch_of(ab, 2);
    int64_t batch_size = batch_n;
    bool want_rank = driver != "gels", want_s = driver == "gelsd" || driver == "gelss";
    std::vector<int64_t> ranks(static_cast<size_t>(batch_size), std::min(m, n));
    svals = want_s ? empty(concat(batch, {std::min(m, n)}), detail::real_options(a))
                   : empty({0}, detail::real_options(a));
    std::vector<int> infos(static_cast<size_t>(batch_size), 0);
    if (m > 0 && n > 0 && k > 0)
      detail::dispatch_lapack(a.dtype(), op, [&](auto zero) {
        using T = decltype(zero);
        T* ap = static_cast<T*>(abuf.data_ptr());
        T* bp = static_cast<T*>(bbuf.data_ptr());
        using R = real_of_t<T>;
        R* sp = want_s ? static_cast<R*>(svals.data_ptr()) : nullptr;
        int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
        int ldb = static_cast<int>(rows);
        for (int64_t i = 0; i < batch_size; ++i) {
          T* ai = ap + i * m * n;
          T* bi = bp + i * rows * k;
          int r = 0, info = 0;
          if (driver == "gelsy")
            info = lapack::gelsy<T>(mi, ni, ki, ai, mi, bi, ldb, static_cast<R>(rc), &r);
          else if (driver == "gelsd")
            info = lapack::gelsd<T>(mi, ni, ki, ai, mi, bi, ldb, sp + i * std::min(m, n),
                                    static_cast<R>(rc), &r);
          else if (driver == "gelss")
            info = lapack::gelss<T>(mi, ni, ki, ai, mi, bi, ldb, sp + i * std::min(m, n),
                                    static_cast<R>(rc), &r);
          else
            info = lapack::gels<T>(mi, ni, ki, ai, mi, bi, ldb);
          infos[static_cast<size_t>(i)] = info;
          if (want_rank) ranks[static_cast<size_t>(i)] = r;
        }
      });
    detail::check_infos(op, infos, a.dim() > 2, [](int) {
      return std::string("The least squares solution could not be computed because the input "
                         "matrix does not have full rank (error code: 1).");
    });
    Tensor sol_full = from_column_major(bbuf);  // (..., rows, k)
    x = sol_full.narrow(-2, 0, n).contiguous();
    rank = want_rank ? from_vector(ranks, {batch_size}, TensorOptions(kInt64)).reshape(batch)
                     : empty({0}, TensorOptions(kInt64));
    bool full_rank = std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) { return r == n; });
    // As PyTorch: gelsy leaves no residuals, gelsd and gelss only for full-rank inputs.
    if (m > n && driver != "gelsy" && (driver == "gels" || full_rank)) {
      Tensor tail = sol_full.narrow(-2, n, m - n);
      residuals = sum(real(tail * conj(tail)), Dims{-2});
      if (vec) residuals = residuals.squeeze(-1);
    } else {
      residuals = empty({0}, detail::real_options(a));
    }
    if (vec) x = x.squeeze(-1);
  }
  if (any_requires_grad({&a, &b}))
    // The minimum-norm solution is pinv(A) B: its derivative.
    record("LinalgLstsqBackward0", {&x}, {&a, &b},
           [sa = SavedTensor(a), sb = SavedTensor(b), vec](const Tensor& g, const Node& node) {
             const Tensor &A = sa.get(), &B = sb.get();
             Tensor P = pinv(A.detach());
             Tensor gm = vec ? g.unsqueeze(-1) : g, bm = vec ? B.unsqueeze(-1) : B;
             Tensor ga, gb;
             if (node.needs_input_grad(0))
               ga = sum_to(pinv_backward(matmul(gm, mH(bm)), P, A.detach()), A.sizes());
             if (node.needs_input_grad(1)) {
               gb = matmul(mH(P), gm);
               if (vec) gb = gb.squeeze(-1);
               gb = sum_to(gb, B.sizes());
             }
             return TensorList{ga, gb};
           });
  return {x, residuals, rank, svals};
}

// --- matrix functions ------------------------------------------------------------------------

namespace {

// sum_j c[j] * m[j], skipping zero coefficients.
Tensor combination(const std::vector<Tensor>& m, std::initializer_list<double> c) {
  Tensor out;
  size_t j = 0;
  for (double v : c) {
    if (v != 0) out = out.defined() ? out + m[j] * v : m[j] * v;
    ++j;
  }
  return out;
}

// The optimized Taylor approximation of exp(A) of degree 1, 2, 4, 8, 12 or 18 (index 0 to 5),
// by Bader, Blanes and Casas's evaluation schemes (their coefficients, as PyTorch's).
Tensor taylor_exp(const Tensor& A, int index) {
  int64_t n = A.size(-1);
  Tensor I = eye(n, n, A.options()).expand(A.sizes());
  if (index == 0) return I + A;
  Tensor A2 = matmul(A, A);
  if (index == 1) return I + A + A2 * 0.5;
  if (index == 2) return I + A + matmul(A2, I * 0.5 + A * (1.0 / 6) + A2 * (1.0 / 24));
  if (index == 3) {
    const double sqrt_177 = 0.1330413469565007072504e+2, x3 = 2.0 / 3;
    const double x1 = x3 * ((1 + sqrt_177) / 88), x2 = x3 * ((1 + sqrt_177) / 352);
    const double x4 = (-271 + 29 * sqrt_177) / (315 * x3);
    const double x5 = (-11 + 11 * sqrt_177) / (1260 * x3);
    const double x6 = (-99 + 11 * sqrt_177) / (5040 * x3), x7 = (89 - sqrt_177) / (5040 * x3);
    const double y2 = (857 - 58 * sqrt_177) / 630;
    Tensor A4 = matmul(A2, A * x1 + A2 * x2);
    Tensor A8 = matmul(A2 * x3 + A4, I * x4 + A * x5 + A2 * x6 + A4 * x7);
    return I + A + A2 * y2 + A8;
  }
  Tensor A3 = matmul(A2, A);
  if (index == 4) {
    std::vector<Tensor> m = {I, A, A2, A3};
    Tensor b0 = combination(m, {9.0198e-16, 0.46932117595418237389, -0.20099424927047284052,
                                -0.04623946134063071740});
    Tensor b1 = combination(m, {5.31597895759871264183, 1.19926790417132231573,
                                0.01179296240992997031, 0.01108844528519167989});
    Tensor b2 = combination(m, {0.18188869982170434744, 0.05502798439925399070,
                                0.09351590770535414968, 0.00610700528898058230});
    Tensor b3 = combination(m, {-2.0861320e-13, -0.13181061013830184015,
                                -0.02027855540589259079, -0.00675951846863086359});
    Tensor A6 = b2 + matmul(b3, b3);
    return b0 + matmul(b1 + A6, A6);
  }
  std::vector<Tensor> m = {I, A, A2, A3, matmul(A3, A3)};
  Tensor b0 = combination(m, {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
                              -8.92138498045729985177e-04, 0.});
  Tensor b1 = combination(m, {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,
                              4.98289622525382669416e-01, -6.37898194594723280150e-04});
  Tensor b2 = combination(m, {-1.09676396052962061844e+01, 1.68015813878906206114e+00,
                              5.71779846478865511061e-02, -6.98210122488052056106e-03,
                              3.34975017086070470649e-05});
  Tensor b3 = combination(m, {-9.04316832390810593223e-02, -6.76404519071381882256e-02,
                              6.75961301770459654925e-02, 2.95552570429315521194e-02,
                              -1.39180257516060693404e-05});
  Tensor b4 = combination(m, {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
                              -1.40086798182036094347e-05});
  Tensor A9 = matmul(b0, b4) + b3;
  return b1 + matmul(b2 + A9, A9);
}

}  // namespace

Tensor matrix_exp(const Tensor& a) {
  EMBER_OP(matrix_exp, a);
  // 16-bit in float32, as PyTorch's opmath; float32 in float64, where the squarings of a large
  // exponent keep their digits (PyTorch's float32 result is off by more than float32 rounding).
  if (a.dtype() == kFloat16 || a.dtype() == kBFloat16)
    return matrix_exp(a.to(kFloat32)).to(a.dtype());
  if (a.dtype() == kFloat32) return matrix_exp(a.to(kFloat64)).to(kFloat32);
  if (a.dtype() == kComplex64) return matrix_exp(a.to(kComplex128)).to(kComplex64);
  detail::check_linalg_input("linalg.matrix_exp", a, true);
  int64_t n = a.size(-1);
  if (a.numel() == 0) return a.clone();
  if (n == 1) return exp(a);
  // Bader, Blanes and Casas's Taylor polynomials (Mathematics 7, 1174, 2019), as PyTorch's: the
  // lowest degree (1, 2, 4, 8, 12, 18) whose theta bounds every matrix's 1-norm; above theta_18,
  // T18 of 2^-s A squared s times (masked where a matrix needs fewer squarings).
  constexpr double kTheta[6] = {2.220446049250313e-16, 2.580956802971767e-08,
                                3.397168839976962e-04, 4.991228871115323e-02,
                                2.996158913811580e-01, 1.090863719290036e+00};
  Tensor norm1 = amax(sum(abs(a.detach()), Dims{-2}), Dims{-1});  // max column sum
  double largest = amax(norm1.reshape({-1}), Dims{0}).item<double>();
  for (int degree = 0; degree < 5; ++degree)
    if (largest <= kTheta[degree]) return taylor_exp(a, degree);
  Tensor s = clamp(ceil(log2(norm1 / kTheta[5])), Scalar(0.0), std::nullopt);
  s = where(isfinite(s), s, scalar_tensor(0, s.options()));
  int64_t max_s = static_cast<int64_t>(amax(s.reshape({-1}), Dims{0}).item<double>());
  Tensor r = taylor_exp(a * exp2(-s).unsqueeze(-1).unsqueeze(-1), 5);
  for (int64_t i = 0; i < max_s; ++i) {
    Tensor squared = matmul(r, r);
    r = where(gt(s, static_cast<double>(i)).unsqueeze(-1).unsqueeze(-1), squared, r);
  }
  return r;
}

Tensor matrix_power(const Tensor& a, int64_t n) {
  EMBER_OP(matrix_power, a, n);
  EMBER_CHECK(a.dim() >= 2 && a.size(-1) == a.size(-2), "linalg.matrix_power: A must be batches "
              "of square matrices, but they are ", a.dim() >= 2 ? a.size(-2) : 0, " by ",
              a.dim() >= 1 ? a.size(-1) : 0, " matrices");
  if (n == 0) {
    Tensor out = eye(a.size(-1), a.size(-1), a.options()).expand(a.sizes()).clone();
    if (any_requires_grad({&a}))  // the identity, whose gradient is 0 (as PyTorch's)
      record("LinalgMatrixPowerBackward0", {&out}, {&a},
             [sizes = a.sizes(), opts = a.options()](const Tensor&) {
               return TensorList{zeros(sizes, opts)};
             });
    return out;
  }
  Tensor base = n < 0 ? inv(a) : a;
  uint64_t e = static_cast<uint64_t>(n < 0 ? -n : n);
  Tensor result;
  while (e) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e) base = matmul(base, base);
  }
  return n == 1 ? result.clone() : result;
}

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  EMBER_OP(multi_dot, tensors);
  EMBER_CHECK(tensors.size() >= 2, "multi_dot(): expected at least 2 tensors but got ",
              tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    int64_t d = tensors[i].dim();
    bool end = i == 0 || i + 1 == tensors.size();
    EMBER_CHECK(d == 2 || (end && d == 1), "multi_dot(): the ",
                i == 0 ? "first" : (i + 1 == tensors.size() ? "last" : "middle"),
                " tensor argument must be ", end ? "1D or 2D" : "2D", " but got ", d, "D");
  }
  Tensor first = tensors.front().dim() == 1 ? tensors.front().unsqueeze(0) : tensors.front();
  Tensor out = first;
  for (size_t i = 1; i < tensors.size(); ++i) {
    Tensor t = tensors[i].dim() == 1 ? tensors[i].unsqueeze(-1) : tensors[i];
    out = matmul(out, t);
  }
  if (tensors.front().dim() == 1) out = out.squeeze(0);
  if (tensors.back().dim() == 1) out = out.squeeze(-1);
  return out;
}

Tensor tensorinv(const Tensor& a, int64_t ind) {
  EMBER_OP(tensorinv, a, ind);
  EMBER_CHECK(ind > 0, "Expected a strictly positive integer for 'ind', but got ", ind);
  Shape left(a.sizes().begin(), a.sizes().begin() + std::min<int64_t>(ind, a.dim()));
  Shape right(a.sizes().begin() + std::min<int64_t>(ind, a.dim()), a.sizes().end());
  int64_t p = std::accumulate(left.begin(), left.end(), int64_t{1}, std::multiplies<>());
  int64_t q = std::accumulate(right.begin(), right.end(), int64_t{1}, std::multiplies<>());
  EMBER_CHECK(p == q, "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
              "prod(self.shape[:ind]), but got ", q, " != ", p);
  Shape out = right;
  for (int64_t d : left) out.push_back(d);
  return inv(a.reshape({p, q})).reshape(out);
}

Tensor tensorsolve(const Tensor& a_in, const Tensor& b, std::optional<std::vector<int64_t>> dims) {
  EMBER_OP(tensorsolve, a_in, b, dims);
  Tensor a = a_in;
  if (dims && !dims->empty()) {
    std::vector<int64_t> order;
    std::vector<bool> moved(static_cast<size_t>(a.dim()), false);
    for (int64_t d : *dims) moved[static_cast<size_t>(d < 0 ? d + a.dim() : d)] = true;
    for (int64_t d = 0; d < a.dim(); ++d)
      if (!moved[static_cast<size_t>(d)]) order.push_back(d);
    for (int64_t d : *dims) order.push_back(d < 0 ? d + a.dim() : d);
    a = a.permute(order);
  }
  Shape result(a.sizes().begin() + b.dim(), a.sizes().end());
  int64_t rows = b.numel();
  int64_t cols = std::accumulate(result.begin(), result.end(), int64_t{1}, std::multiplies<>());
  EMBER_CHECK(rows == cols, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
              "== prod(self.shape[:other.ndim]), but got ", cols, " != ", rows);
  return solve(a.reshape({rows, cols}), b.reshape({rows})).reshape(result);
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  EMBER_OP(vecdot, x, y, dim);
  return sum(conj(x) * y, Dims{dim});
}

Tensor vander(const Tensor& x_in, std::optional<int64_t> n_in) {
  EMBER_OP(vander, x_in, n_in);
  const Tensor x = x_in.dim() == 0 ? x_in.reshape({1}) : x_in;  // a 0-dim x is one point
  int64_t n = n_in.value_or(x.dim() > 0 ? x.size(-1) : 1);
  EMBER_CHECK(n > 1, "N must be greater than 1.");
  Shape shape = x.sizes();
  shape.push_back(n - 1);
  Tensor powers = cumprod(x.unsqueeze(-1).expand(shape), -1);
  return cat({ones_like(x).unsqueeze(-1), powers}, -1);
}

}  // namespace ember::linalg
