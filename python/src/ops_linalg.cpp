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
  t.def("cholesky(Tensor A, *, bool upper=False, Tensor? out=None)",
        [](const Args& a) { return L::cholesky(a.tensor(0), a.flag(1)); }, kFunction);
  t.def("cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False, Tensor[]? out=None)",
        [](const Args& a) {
          auto [l, info] = L::cholesky_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_cholesky_ex", {l, info}};
        },
        kFunction);
  t.def("inv(Tensor A, *, Tensor? out=None)", [](const Args& a) { return L::inv(a.tensor(0)); },
        kFunction);
  t.def("inv_ex(Tensor A, *, bool check_errors=False, Tensor[]? out=None)",
        [](const Args& a) {
          auto [x, info] = L::inv_ex(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_inv_ex", {x, info}};
        },
        kFunction);
  t.def("det(Tensor A, *, Tensor? out=None)", [](const Args& a) { return L::det(a.tensor(0)); },
        kFunction);
  t.def("slogdet(Tensor A, *, Tensor[]? out=None)",
        [](const Args& a) {
          auto [s, l] = L::slogdet(a.tensor(0));
          return NamedResult{"return_types.linalg_slogdet", {s, l}};
        },
        kFunction);
  t.def("solve(Tensor A, Tensor B, *, bool left=True, Tensor? out=None)",
        [](const Args& a) { return L::solve(a.tensor(0), a.tensor(1), a.flag(2)); }, kFunction);
  t.def("solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, "
        "Tensor[]? out=None)",
        [](const Args& a) {
          auto [x, info] = L::solve_ex(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3));
          return NamedResult{"return_types.linalg_solve_ex", {x, info}};
        },
        kFunction);
  t.def("solve_triangular(Tensor A, Tensor B, *, bool upper, bool left=True, "
        "bool unitriangular=False, Tensor? out=None)",
        [](const Args& a) {
          return L::solve_triangular(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3), a.flag(4));
        },
        kFunction);
  t.def("lu_factor(Tensor A, *, bool pivot=True, Tensor[]? out=None)",
        [](const Args& a) {
          auto [lu, piv] = L::lu_factor(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_lu_factor", {lu, piv}};
        },
        kFunction);
  t.def("lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False, Tensor[]? out=None)",
        [](const Args& a) {
          auto [lu, piv, info] = L::lu_factor_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_lu_factor_ex", {lu, piv, info}};
        },
        kFunction);
  t.def("lu(Tensor A, *, bool pivot=True, Tensor[]? out=None)",
        [](const Args& a) {
          auto [p, l, u] = L::lu(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_lu", {p, l, u}};
        },
        kFunction);
  t.def("lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, "
        "Tensor? out=None)",
        [](const Args& a) {
          return L::lu_solve(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3), a.flag(4));
        },
        kFunction);
  t.def("qr(Tensor A, str mode='reduced', *, Tensor[]? out=None)",
        [](const Args& a) {
          auto [q, r] = L::qr(a.tensor(0), a.str(1));
          return NamedResult{"return_types.linalg_qr", {q, r}};
        },
        kFunction);
  t.def("householder_product(Tensor A, Tensor tau, *, Tensor? out=None)",
        [](const Args& a) { return L::householder_product(a.tensor(0), a.tensor(1)); }, kFunction);
  t.def("eigh(Tensor A, str UPLO='L', *, Tensor[]? out=None)",
        [](const Args& a) {
          auto [w, v] = L::eigh(a.tensor(0), a.str(1));
          return NamedResult{"return_types.linalg_eigh", {w, v}};
        },
        kFunction);
  t.def("eig(Tensor A, *, Tensor[]? out=None)",
        [](const Args& a) {
          auto [w, v] = L::eig(a.tensor(0));
          return NamedResult{"return_types.linalg_eig", {w, v}};
        },
        kFunction);
  t.def("eigvals(Tensor A, *, Tensor? out=None)",
        [](const Args& a) { return L::eigvals(a.tensor(0)); }, kFunction);
  t.def("eigvalsh(Tensor A, str UPLO='L', *, Tensor? out=None)",
        [](const Args& a) { return L::eigvalsh(a.tensor(0), a.str(1)); }, kFunction);
  t.def("svd(Tensor A, bool full_matrices=True, *, str? driver=None, Tensor[]? out=None)",
        [](const Args& a) {
          auto [u, s, vh] = L::svd(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_svd", {u, s, vh}};
        },
        kFunction);
  t.def("svdvals(Tensor A, *, str? driver=None, Tensor? out=None)",
        [](const Args& a) { return L::svdvals(a.tensor(0)); }, kFunction);
  t.def("ldl_factor_ex(Tensor A, *, bool hermitian=False, bool check_errors=False, "
        "Tensor[]? out=None)",
        [](const Args& a) {
          auto [ld, piv, info] = L::ldl_factor_ex(a.tensor(0), a.flag(1), a.flag(2));
          return NamedResult{"return_types.linalg_ldl_factor_ex", {ld, piv, info}};
        },
        kFunction);
  t.def("ldl_factor(Tensor A, *, bool hermitian=False, Tensor[]? out=None)",
        [](const Args& a) {
          auto [ld, piv] = L::ldl_factor(a.tensor(0), a.flag(1));
          return NamedResult{"return_types.linalg_ldl_factor", {ld, piv}};
        },
        kFunction);
  t.def("ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor? out=None)",
        [](const Args& a) {
          return L::ldl_solve(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3));
        },
        kFunction);
  t.def("lstsq(Tensor A, Tensor B, float? rcond=None, *, str? driver=None)",
        [](const Args& a) {
          auto [x, res, rank, sv] = L::lstsq(a.tensor(0), a.tensor(1), a.opt_real(2),
                                             a.has(3) ? a.str(3) : std::string());
          return NamedResult{"return_types.linalg_lstsq", {x, res, rank, sv}};
        },
        kFunction);
  t.def("pinv(Tensor A, *, float? atol=None, float? rtol=None, bool hermitian=False, "
        "Tensor? out=None)",
        [](const Args& a) { return L::pinv(a.tensor(0), a.opt_real(1), a.opt_real(2), a.flag(3)); },
        kFunction);
  t.def("pinv(Tensor A, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, "
        "Tensor? out=None)",
        [](const Args& a) {
          return L::pinv(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                         a.flag(3));
        },
        kFunction);
  t.def("pinv(Tensor A, float rcond, bool hermitian=False, *, Tensor? out=None)",
        [](const Args& a) { return L::pinv(a.tensor(0), 0.0, a.real(1), a.flag(2)); }, kFunction);
  t.def("matrix_rank(Tensor A, *, float? atol=None, float? rtol=None, bool hermitian=False, "
        "Tensor? out=None)",
        [](const Args& a) {
          return L::matrix_rank(a.tensor(0), a.opt_real(1), a.opt_real(2), a.flag(3));
        },
        kFunction);
  t.def("matrix_rank(Tensor A, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, "
        "Tensor? out=None)",
        [](const Args& a) {
          return L::matrix_rank(a.tensor(0), a.tensor_or_undefined(1), a.tensor_or_undefined(2),
                                a.flag(3));
        },
        kFunction);
  t.def("matrix_rank(Tensor A, float tol, bool hermitian=False, *, Tensor? out=None)",
        [](const Args& a) { return L::matrix_rank(a.tensor(0), a.real(1), 0.0, a.flag(2)); },
        kFunction);
  t.def("matrix_exp(Tensor A)", [](const Args& a) { return L::matrix_exp(a.tensor(0)); },
        kFunction);
  t.def("matrix_power(Tensor A, int n, *, Tensor? out=None)",
        [](const Args& a) { return L::matrix_power(a.tensor(0), a.int64(1)); }, kFunction);
  t.def("multi_dot(Tensor[] tensors, *, Tensor? out=None)",
        [](const Args& a) { return L::multi_dot(a.tensors(0)); }, kFunction);
  t.def("tensorinv(Tensor A, int ind=2, *, Tensor? out=None)",
        [](const Args& a) { return L::tensorinv(a.tensor(0), a.int64(1)); }, kFunction);
  t.def("tensorsolve(Tensor A, Tensor B, int[]? dims=None, *, Tensor? out=None)",
        [](const Args& a) {
          std::optional<std::vector<int64_t>> dims;
          if (a.has(2)) dims = a.ints(2);
          return L::tensorsolve(a.tensor(0), a.tensor(1), dims);
        },
        kFunction);
  t.def("vecdot(Tensor x, Tensor y, *, int dim=-1, Tensor? out=None)",
        [](const Args& a) { return L::vecdot(a.tensor(0), a.tensor(1), a.int64(2)); }, kFunction);
  t.def("vander(Tensor x, *, int? N=None)",
        [](const Args& a) { return L::vander(a.tensor(0), a.opt_int(1)); }, kFunction);
  t.def("cross(Tensor input, Tensor other, *, int dim=-1, Tensor? out=None)",
        [](const Args& a) { return cross(a.tensor(0), a.tensor(1), a.int64(2)); }, kFunction);
  t.def("vector_norm(Tensor x, Scalar ord=2, int[]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None, Tensor? out=None)",
        [](const Args& a) {
          return L::vector_norm(a.tensor(0), a.scalar(1).to_double(), dims_or_empty(a, 2),
                                a.flag(3), a.dtype(4));
        },
        kFunction);
  t.def("matrix_norm(Tensor A, PyObject ord='fro', int[] dim=(-2, -1), bool keepdim=False, *, "
        "ScalarType? dtype=None, Tensor? out=None)",
        [](const Args& a) -> py::object {
          const auto& d = a.ints(2);
          EMBER_CHECK(d.size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", d.size(),
                      " dims");
          L::NormOrd ord = norm_ord(a, 1).value_or(std::string("fro"));
          return py::cast(nogil([&] {
            return L::matrix_norm(a.tensor(0), ord, {d[0], d[1]}, a.flag(3), a.dtype(4));
          }));
        },
        kFunction);
  t.def("norm(Tensor A, PyObject ord=None, int[]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None, Tensor? out=None)",
        [](const Args& a) -> py::object {
          auto ord = norm_ord(a, 1);
          return py::cast(nogil([&] {
            return L::norm(a.tensor(0), ord, dims_or_empty(a, 2), a.flag(3), a.dtype(4));
          }));
        },
        kFunction);
  t.def("cond(Tensor A, PyObject p=None, *, Tensor? out=None)",
        [](const Args& a) -> py::object {
          auto ord = norm_ord(a, 1);
          return py::cast(nogil([&] { return L::cond(a.tensor(0), ord); }));
        },
        kFunction);
}

// torch.det, torch.inverse, torch.svd, ...: the older spellings, as functions and methods.
void def_linalg_top_level(OpTable& t) {
  t.def("det(Tensor input)", [](const Args& a) { return L::det(a.tensor(0)); });
  t.def("logdet(Tensor input)", [](const Args& a) { return L::logdet(a.tensor(0)); });
  t.def("slogdet(Tensor input)", [](const Args& a) {
    auto [s, l] = L::slogdet(a.tensor(0));
    return NamedResult{"return_types.slogdet", {s, l}};
  });
  t.def("inverse(Tensor input, *, Tensor? out=None)",
        [](const Args& a) { return L::inv(a.tensor(0)); });
  t.def("pinverse(Tensor input, float rcond=1e-15)",
        [](const Args& a) { return L::pinv(a.tensor(0), 0.0, a.real(1)); });
  t.def("matrix_exp(Tensor input)", [](const Args& a) { return L::matrix_exp(a.tensor(0)); });
  t.def("matrix_power(Tensor input, int n)",
        [](const Args& a) { return L::matrix_power(a.tensor(0), a.int64(1)); });
  t.def("cholesky(Tensor input, bool upper=False, *, Tensor? out=None)",
        [](const Args& a) { return L::cholesky(a.tensor(0), a.flag(1)); });
  t.def("cholesky_solve(Tensor input, Tensor input2, bool upper=False, *, Tensor? out=None)",
        [](const Args& a) { return L::cholesky_solve(a.tensor(0), a.tensor(1), a.flag(2)); });
  t.def("cholesky_inverse(Tensor input, bool upper=False, *, Tensor? out=None)",
        [](const Args& a) { return L::cholesky_inverse(a.tensor(0), a.flag(1)); });
  t.def("svd(Tensor input, bool some=True, bool compute_uv=True, *, Tensor[]? out=None)",
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
  t.def("qr(Tensor input, bool some=True, *, Tensor[]? out=None)", [](const Args& a) {
    auto [q, r] = L::qr(a.tensor(0), a.flag(1) ? "reduced" : "complete");
    return NamedResult{"return_types.qr", {q, r}};
  });
  t.def("symeig(Tensor input, bool eigenvectors=False, bool upper=True, *, Tensor[]? out=None)",
        [](const Args& a) {
          std::string uplo = a.flag(2) ? "U" : "L";
          if (!a.flag(1))
            return NamedResult{"return_types.symeig",
                               {L::eigvalsh(a.tensor(0), uplo), empty({0}, a.tensor(0).options())}};
          auto [w, v] = L::eigh(a.tensor(0), uplo);
          return NamedResult{"return_types.symeig", {w, v}};
        });
  t.def("geqrf(Tensor input, *, Tensor[]? out=None)", [](const Args& a) {
    auto [q, tau] = L::geqrf(a.tensor(0));
    return NamedResult{"return_types.geqrf", {q, tau}};
  });
  t.def("orgqr(Tensor input, Tensor tau)",
        [](const Args& a) { return L::householder_product(a.tensor(0), a.tensor(1)); });
  t.def("ormqr(Tensor input, Tensor input2, Tensor input3, bool left=True, bool transpose=False, "
        "*, Tensor? out=None)",
        [](const Args& a) {
          return L::ormqr(a.tensor(0), a.tensor(1), a.tensor(2), a.flag(3), a.flag(4));
        });
  t.def("triangular_solve(Tensor input, Tensor A, bool upper=True, bool transpose=False, "
        "bool unitriangular=False, *, Tensor[]? out=None)",
        [](const Args& a) {
          const Tensor &b = a.tensor(0), &A = a.tensor(1);
          bool upper = a.flag(2), trans = a.flag(3);
          Tensor x = L::solve_triangular(trans ? mT(A) : A, b, trans ? !upper : upper, true,
                                         a.flag(4));
          return NamedResult{"return_types.triangular_solve", {x, A.clone()}};
        });
  t.def("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
        "bool unpack_pivots=True, *, Tensor[]? out=None)",
        [](const Args& a) {
          auto [p, l, u] = L::lu_unpack(a.tensor(0), a.tensor(1), a.flag(2), a.flag(3));
          return NamedResult{"return_types.lu_unpack", {p, l, u}};
        },
        kFunction);
  t.def("lu_solve(Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor? out=None)",
        [](const Args& a) { return L::lu_solve(a.tensor(1), a.tensor(2), a.tensor(0)); });
  t.def("lu(Tensor A, bool pivot=True, bool get_infos=False, *, Tensor[]? out=None)",
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
