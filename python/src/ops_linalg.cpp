// torch.linalg (ember._C._linalg) and the older torch.* spellings of the same algebra (det,
// inverse, svd, qr, symeig, cholesky, lu, triangular_solve, ...), one declaration each
// (op_table.h). The C++ is in ember/ops/decompositions.h, solvers.h and norms.h.
#include <cmath>

#include "ember/ops/decompositions.h"
#include "ember/ops/norms.h"
#include "ember/ops/solvers.h"
#include "ember/ops/views.h"
#include "op_table.h"

namespace ember::python {
namespace {

namespace L = ember::linalg;

// ord= of the norms: a number, inf, or a string ('fro', 'nuc').
std::optional<L::NormOrd> norm_ord(const Args& a, size_t i) {
  py::handle h = a.object(i);
  if (!a.has(i) || h.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(h)) return L::NormOrd(std::string(py::str(h)));
  return L::NormOrd(py::cast<double>(h));
}

Dims dims_or_empty(const Args& a, size_t i) {
  if (!a.has(i)) return {};
  return a.dims(i);
}

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

}  // namespace

void def_linalg_ops(OpTable& t) {
  t.def("cholesky",
        [](const Args& a) { return L::cholesky(a.tensor(0), a.flag(1)); });
  t.def("cholesky_ex",
        [](const Args& a) {
          auto [l, info] = L::cholesky_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_cholesky_ex", {l, info}};
        });
  t.def("inv", [](const Args& a) { return L::inv(a.tensor(0)); });
  t.def("inv_ex",
        [](const Args& a) {
          auto [x, info] = L::inv_ex(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_inv_ex", {x, info}};
        });
  t.def("det", [](const Args& a) { return L::det(a.tensor(0)); });
  t.def("slogdet",
        [](const Args& a) {
          auto [s, l] = L::slogdet(a.tensor(0));
          return NamedResult{"return_types.linalg_slogdet", {s, l}};
        });
  t.def("solve",
        [](const Args& a) { return L::solve(a.tensor(0), a.tensor(1), a.flag(2)); });
  t.def("solve_ex",
        [](const Args& a) {
          auto [x, info] = L::solve_ex(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3));
          return NamedResult{"return_types.linalg_solve_ex", {x, info}};
        });
  t.def("solve_triangular",
        [](const Args& a) {
          return L::solve_triangular(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3), a.flag(4));
        });
  t.def("lu_factor",
        [](const Args& a) {
          auto [lu, piv] = L::lu_factor(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_lu_factor", {lu, piv}};
        });
  t.def("lu_factor_ex",
        [](const Args& a) {
          auto [lu, piv, info] = L::lu_factor_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_lu_factor_ex", {lu, piv, info}};
        });
  t.def("lu",
        [](const Args& a) {
          auto [p, l, u] = L::lu(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_lu", {p, l, u}};
        });
  t.def("lu_solve",
        [](const Args& a) {
          return L::lu_solve(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3), a.flag(4));
        });
  t.def("qr",
        [](const Args& a) {
          auto [q, r] = L::qr(a.tensor(0), a.str(1));
          return NamedResult{"return_types.linalg_qr", {q, r}};
        });
  t.def("householder_product",
        [](const Args& a) { return L::householder_product(a.tensor(0), a.tensor(1)); });
  t.def("eigh",
        [](const Args& a) {
          auto [w, v] = L::eigh(a.tensor(0), a.str(1));
          return NamedResult{"return_types.linalg_eigh", {w, v}};
        });
  t.def("eig",
        [](const Args& a) {
          auto [w, v] = L::eig(a.tensor(0));
          return NamedResult{"return_types.linalg_eig", {w, v}};
        });
  t.def("eigvals",
        [](const Args& a) { return L::eigvals(a.tensor(0)); });
  t.def("eigvalsh",
        [](const Args& a) { return L::eigvalsh(a.tensor(0), a.str(1)); });
  t.def("svd",
        [](const Args& a) {
          auto [u, s, vh] = L::svd(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_svd", {u, s, vh}};
        });
  t.def("svdvals",
        [](const Args& a) { return L::svdvals(a.tensor(0)); });
  t.def("ldl_factor_ex",
        [](const Args& a) {
          auto [ld, piv, info] = L::ldl_factor_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_ldl_factor_ex", {ld, piv, info}};
        });
  t.def("ldl_factor",
        [](const Args& a) {
          auto [ld, piv] = L::ldl_factor(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_ldl_factor", {ld, piv}};
        });
  t.def("ldl_solve",
        [](const Args& a) {
          return L::ldl_solve(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3));
        });
  t.def("lstsq",
        [](const Args& a) {
          auto [x, res, rank, sv] = L::lstsq(a.tensor(0), a.tensor(1), a.opt_real(2),
                                             a.has(3) ? a.str(3) : std::string());
          return NamedResult{"return_types.linalg_lstsq", {x, res, rank, sv}};
        });
  t.def("pinv.atol_rtol_float_",
        [](const Args& a) { return L::pinv(a.tensor(0), a.opt_real(1), a.opt_real(2), a.flag(3)); });
  t.def("pinv.atol_rtol_float",
        [](const Args& a) {
          return L::pinv(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                         a.flag(3));
        });
  t.def("pinv",
        [](const Args& a) { return L::pinv(a.tensor(0), 0.0, a.real(1), a.flag(2)); });
  t.def("matrix_rank.atol_rtol_tensor_",
        [](const Args& a) {
          return L::matrix_rank(a.tensor(0), a.opt_real(1), a.opt_real(2), a.flag(3));
        });
  t.def("matrix_rank.atol_rtol_tensor",
        [](const Args& a) {
          return L::matrix_rank(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                                a.flag(3));
        });
  t.def("matrix_rank",
        [](const Args& a) { return L::matrix_rank(a.tensor(0), a.real(1), 0.0, a.flag(2)); });
  t.def("matrix_exp", [](const Args& a) { return L::matrix_exp(a.tensor(0)); });
  t.def("matrix_power",
        [](const Args& a) { return L::matrix_power(a.tensor(0), a.int64(1)); });
  t.def("multi_dot",
        [](const Args& a) { return L::multi_dot(a.tensors(0)); });
  t.def("tensorinv",
        [](const Args& a) { return L::tensorinv(a.tensor(0), a.int64(1)); });
  t.def("tensorsolve",
        [](const Args& a) {
          std::optional<std::vector<int64_t>> dims;
          if (a.has(2)) dims = a.ints(2);
          return L::tensorsolve(a.tensor(0), a.tensor(1), dims);
        });
  t.def("vecdot",
        [](const Args& a) { return L::vecdot(a.tensor(0), a.tensor(1), a.int64(2)); });
  t.def("vander",
        [](const Args& a) { return L::vander(a.tensor(0), a.opt_int(1)); });
  t.def("cross",
        [](const Args& a) { return cross(a.tensor(0), a.tensor(1), a.int64(2)); });
  t.def("vector_norm",
        [](const Args& a) {
          return L::vector_norm(a.tensor(0), a.scalar(1).to_double(), dims_or_empty(a, 2),
                                a.flag(3), a.dtype(4));
        });
  t.def("matrix_norm",
        [](const Args& a) -> py::object {
          const auto& d = a.ints(2);
          EMBER_CHECK(d.size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", d.size(),
                      " dims");
          L::NormOrd ord = norm_ord(a, 1).value_or(std::string("fro"));
          return py::cast(nogil([&] {
            return L::matrix_norm(a.tensor(0), ord, {d[0], d[1]}, a.flag(3), a.dtype(4));
          }));
        });
  t.def("norm",
        [](const Args& a) -> py::object {
          auto ord = norm_ord(a, 1);
          return py::cast(nogil([&] {
            return L::norm(a.tensor(0), ord, dims_or_empty(a, 2), a.flag(3), a.dtype(4));
          }));
        });
  t.def("cond",
        [](const Args& a) -> py::object {
          auto ord = norm_ord(a, 1);
          return py::cast(nogil([&] { return L::cond(a.tensor(0), ord); }));
        });
}

// torch.det, torch.inverse, torch.svd, ...: the older spellings, as functions and methods.
void def_linalg_top_level(OpTable& t) {
  t.def("det", [](const Args& a) { return L::det(a.tensor(0)); });
  t.def("logdet", [](const Args& a) { return L::logdet(a.tensor(0)); });
  t.def("slogdet", [](const Args& a) {
    auto [s, l] = L::slogdet(a.tensor(0));
    return NamedResult{"return_types.slogdet", {s, l}};
  });
  t.def("inverse",
        [](const Args& a) { return L::inv(a.tensor(0)); });
  t.def("pinverse",
        [](const Args& a) { return L::pinv(a.tensor(0), 0.0, a.real(1)); });
  t.def("matrix_exp", [](const Args& a) { return L::matrix_exp(a.tensor(0)); });
  t.def("matrix_power",
        [](const Args& a) { return L::matrix_power(a.tensor(0), a.int64(1)); });
  t.def("cholesky",
        [](const Args& a) { return L::cholesky(a.tensor(0), a.flag(1)); });
  t.def("cholesky_solve",
        [](const Args& a) { return L::cholesky_solve(a.tensor(0), a.tensor(1), a.flag(2)); });
  t.def("cholesky_inverse",
        [](const Args& a) { return L::cholesky_inverse(a.tensor(0), a.flag(1)); });
  t.def("svd",
        [](const Args& a) {
          const Tensor& x = a.tensor(0);
          if (!a.flag(2)) {
            // The values only; U and V zero-filled (m, m) and (n, n), as PyTorch's.
            Tensor s = L::svdvals(x);
            Shape bu(x.sizes().begin(), x.sizes().end() - 2), bv = bu;
            bu.push_back(x.size(-2));
            bu.push_back(x.size(-2));
            bv.push_back(x.size(-1));
            bv.push_back(x.size(-1));
            return NamedResult{"return_types.svd", {zeros(bu, x.options()), s,
                                                    zeros(bv, x.options())}};
          }
          auto [u, s, vh] = L::svd(x, !a.flag(1));
          return NamedResult{"return_types.svd", {u, s, conj(mT(vh))}};  // V = Vh^H
        });
  t.def("qr", [](const Args& a) {
    auto [q, r] = L::qr(a.tensor(0), a.flag(1) ? "reduced" : "complete");
    return NamedResult{"return_types.qr", {q, r}};
  });
  t.def("symeig",
        [](const Args& a) {
          std::string uplo = a.flag(2) ? "U" : "L";
          if (!a.flag(1))
            return NamedResult{"return_types.symeig",
                               {L::eigvalsh(a.tensor(0), uplo), empty({0}, a.tensor(0).options())}};
          auto [w, v] = L::eigh(a.tensor(0), uplo);
          return NamedResult{"return_types.symeig", {w, v}};
        });
  t.def("geqrf", [](const Args& a) {
    auto [q, tau] = L::geqrf(a.tensor(0));
    return NamedResult{"return_types.geqrf", {q, tau}};
  });
  t.def("orgqr",
        [](const Args& a) { return L::householder_product(a.tensor(0), a.tensor(1)); });
  t.def("ormqr",
        [](const Args& a) {
          return L::ormqr(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3), a.flag(4));
        });
  t.def("triangular_solve",
        [](const Args& a) {
          const Tensor &b = a.tensor(0), &A = a.tensor(1);
          bool upper = a.flag(2), trans = a.flag(3);
          Tensor x = L::solve_triangular(trans ? mT(A) : A, b, trans ? !upper : upper, true,
                                         a.flag(4));
          return NamedResult{"return_types.triangular_solve", {x, A.clone()}};
        });
  t.def("lu_unpack",
        [](const Args& a) {
          auto [p, l, u] = L::lu_unpack(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3));
          return NamedResult{"return_types.lu_unpack", {p, l, u}};
        });
  t.def("lu_solve",
        [](const Args& a) { return L::lu_solve(a.tensor(1), a.tensor(2), a.tensor(0)); });
  t.def("lu",
        [](const Args& a) -> py::object {
          Tensor lu, piv, info;
          {
            ReleaseGil no_gil;
            std::tie(lu, piv, info) = L::lu_factor_ex(a.tensor(0), a.flag(1), false);
          }
          if (a.flag(2)) return py::make_tuple(lu, piv, info);
          return py::make_tuple(lu, piv);
        });
}

}  // namespace ember::python
