"""torch.linalg on complex64 and complex128 matrices (LAPACK's c and z routines): every
decomposition and solver against PyTorch 1.13's values, and complex128 gradients against
PyTorch's through losses that do not depend on the phase of eigen- or singular vectors."""
import numpy as np
import pytest
import torch

import ember


def E(t):
    if not isinstance(t, torch.Tensor):
        return t
    e = ember.from_numpy(t.detach().numpy().copy())
    return e.requires_grad_() if t.requires_grad else e


def T(e):
    return torch.from_numpy(np.array(e.detach().numpy()))


def flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def same(got, want, tol):
    got, want = flat(got), flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, ember.Tensor)
        assert str(g.dtype)[6:] == str(w.dtype)[6:], (g.dtype, w.dtype)
        torch.testing.assert_close(T(g), w.detach(), rtol=tol, atol=tol)


torch.manual_seed(0)
A = torch.randn(3, 4, 4, dtype=torch.complex128)
H = A @ A.mH + torch.eye(4)                          # Hermitian positive definite
S = A + A.mT                                         # complex symmetric
B = torch.randn(3, 4, 2, dtype=torch.complex128)
TALL = torch.randn(5, 3, dtype=torch.complex128)
WIDE = TALL.mT.contiguous()
LSTSQ_B = torch.randn(5, 2, dtype=torch.complex128)


def phase_free(f, *picks):
    """f's outputs with eigen/singular vectors replaced by their magnitudes."""
    def g(*args):
        out = flat(f(*args))
        return [o.abs() if i in picks else o for i, o in enumerate(out)]
    return g


la, ela = torch.linalg, ember.linalg
# (name, PyTorch function, ember function, inputs)
CASES = [
    ("det", la.det, ela.det, (A,)),
    ("slogdet", la.slogdet, ela.slogdet, (A,)),
    ("logdet", torch.logdet, ember.logdet, (H,)),
    ("inv", la.inv, ela.inv, (A,)),
    ("solve", la.solve, ela.solve, (A, B)),
    ("cholesky", la.cholesky, ela.cholesky, (H,)),
    ("cholesky_upper", lambda x: la.cholesky(x, upper=True),
     lambda x: ela.cholesky(x, upper=True), (H,)),
    ("lu_factor", lambda x: la.lu_factor(x)[0], lambda x: ela.lu_factor(x)[0], (A,)),
    ("lu", la.lu, ela.lu, (A,)),
    ("lu_wide", la.lu, ela.lu, (WIDE,)),
    ("lu_tall", la.lu, ela.lu, (TALL,)),
    ("qr", la.qr, ela.qr, (TALL,)),
    ("qr_wide", la.qr, ela.qr, (WIDE,)),
    ("eigvalsh", la.eigvalsh, ela.eigvalsh, (H,)),
    ("eigh", phase_free(la.eigh, 1), phase_free(ela.eigh, 1), (H,)),
    ("eigvals", la.eigvals, ela.eigvals, (A,)),
    ("eig", phase_free(la.eig, 1), phase_free(ela.eig, 1), (A,)),
    ("svdvals", la.svdvals, ela.svdvals, (TALL,)),
    ("svd", phase_free(lambda x: la.svd(x, full_matrices=False), 0, 2),
     phase_free(lambda x: ela.svd(x, full_matrices=False), 0, 2), (TALL,)),
    ("svd_uvh", lambda x: (lambda u, s, vh: u @ vh)(*la.svd(x, full_matrices=False)),
     lambda x: (lambda u, s, vh: u @ vh)(*ela.svd(x, full_matrices=False)), (WIDE,)),
    ("pinv", la.pinv, ela.pinv, (TALL,)),
    ("pinv_hermitian", lambda x: la.pinv(x, hermitian=True),
     lambda x: ela.pinv(x, hermitian=True), (H,)),
    ("lstsq", lambda a, b: la.lstsq(a, b)[0], lambda a, b: ela.lstsq(a, b)[0], (TALL, LSTSQ_B)),
    ("matrix_exp", la.matrix_exp, ela.matrix_exp, (A,)),
    ("solve_triangular", lambda a, b: la.solve_triangular(a.triu(), b, upper=True),
     lambda a, b: ela.solve_triangular(a.triu(), b, upper=True), (A, B)),
    ("solve_triangular_right",
     lambda a, b: la.solve_triangular(a.tril(), b.mT, upper=False, left=False),
     lambda a, b: ela.solve_triangular(a.tril(), b.mT, upper=False, left=False), (A, B)),
    ("householder_product", la.householder_product, ela.householder_product,
     tuple(torch.geqrf(TALL))),
    ("cholesky_inverse", torch.cholesky_inverse, ember.cholesky_inverse,
     (la.cholesky(H)[0],)),
    ("cholesky_solve", torch.cholesky_solve, ember.cholesky_solve, (B, la.cholesky(H))),
    ("lu_solve", la.lu_solve, ela.lu_solve, (*la.lu_factor(A), B)),
    ("lu_solve_adjoint", lambda lu, p, b: la.lu_solve(lu, p, b, adjoint=True),
     lambda lu, p, b: ela.lu_solve(lu, p, b, adjoint=True), (*la.lu_factor(A), B)),
    ("matrix_norm_nuc", lambda x: la.matrix_norm(x, "nuc"),
     lambda x: ela.matrix_norm(x, "nuc"), (A,)),
    ("matrix_norm_2", lambda x: la.matrix_norm(x, 2), lambda x: ela.matrix_norm(x, 2), (A,)),
    ("cond", la.cond, ela.cond, (A,)),
]
# Values only: no gradient in PyTorch (or none through these arguments).
VALUE_CASES = [
    ("geqrf", torch.geqrf, ember.geqrf, (TALL,)),
    ("ormqr_adjoint", lambda a, t, c: torch.ormqr(a, t, c, transpose=True),
     lambda a, t, c: ember.ormqr(a, t, c, transpose=True),
     (*torch.geqrf(TALL), torch.randn(5, 2, dtype=torch.complex128))),
    ("triangular_solve_transpose", lambda b, a: torch.triangular_solve(b, a, transpose=True),
     lambda b, a: ember.triangular_solve(b, a, transpose=True), (B, A.triu())),
    ("matrix_rank", la.matrix_rank, ela.matrix_rank, (TALL,)),
    ("ldl_factor", la.ldl_factor, ela.ldl_factor, (S,)),
    ("ldl_factor_hermitian", lambda x: la.ldl_factor(x, hermitian=True),
     lambda x: ela.ldl_factor(x, hermitian=True), (H,)),
    ("ldl_solve", la.ldl_solve, ela.ldl_solve, (*la.ldl_factor(S), B)),
    ("ldl_solve_hermitian", lambda ld, p, b: la.ldl_solve(ld, p, b, hermitian=True),
     lambda ld, p, b: ela.ldl_solve(ld, p, b, hermitian=True),
     (*la.ldl_factor(H, hermitian=True), B)),
    ("lstsq_gelsd", lambda a, b: la.lstsq(a, b, driver="gelsd"),
     lambda a, b: ela.lstsq(a, b, driver="gelsd"), (TALL, LSTSQ_B)),
    ("lstsq_gelss", lambda a, b: la.lstsq(a, b, driver="gelss"),
     lambda a, b: ela.lstsq(a, b, driver="gelss"), (TALL, LSTSQ_B)),
    ("lstsq_gels", lambda a, b: la.lstsq(a, b, driver="gels"),
     lambda a, b: ela.lstsq(a, b, driver="gels"), (TALL, LSTSQ_B)),
]


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("name,tf,ef,args", CASES + VALUE_CASES, ids=lambda c: c
                         if isinstance(c, str) else "")
def test_values(name, tf, ef, args, dtype):
    args = tuple(a.to(dtype) if isinstance(a, torch.Tensor) and a.is_complex() else a
                 for a in args)
    same(ef(*map(E, args)), tf(*args), 1e-4 if dtype == torch.complex64 else 1e-9)


@pytest.mark.parametrize("name,tf,ef,args", CASES, ids=lambda c: c if isinstance(c, str) else "")
def test_gradients(name, tf, ef, args):
    args = tuple(a.clone().requires_grad_() if isinstance(a, torch.Tensor) and a.is_complex()
                 else a for a in args)
    outs = [o for o in flat(tf(*args)) if o.requires_grad]
    cotangents = [torch.randn_like(o) for o in outs]
    wrt = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    want = torch.autograd.grad(outs, [args[i] for i in wrt], cotangents)
    eargs = [E(a) for a in args]
    eouts = [o for o in flat(ef(*eargs)) if o.requires_grad]
    got = ember.autograd.grad(eouts, [eargs[i] for i in wrt], [E(c) for c in cotangents])
    same(list(got), list(want), 1e-7)


def test_errors_name_the_op():
    singular = torch.zeros(2, 2, dtype=torch.complex128)
    with pytest.raises(RuntimeError, match="linalg.cholesky.*not positive-definite"):
        ela.cholesky(E(singular))
    with pytest.raises(RuntimeError, match="linalg.inv.*singular"):
        ela.inv(E(singular))
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
        ela.det(ember.zeros(2, 2, dtype=ember.float16))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("norm", [1e-17, 1e-9, 1e-4, 0.03, 0.2, 0.8, 3.0, 40.0])
def test_matrix_exp_takes_pytorchs_degree_for_each_norm(dtype, norm):
    # Each norm falls in another of the Taylor degrees 1, 2, 4, 8, 12, 18 (or needs squarings).
    a = torch.randn(3, 6, 6, dtype=dtype, generator=torch.Generator().manual_seed(1))
    a = a / torch.linalg.matrix_norm(a, 1).amax() * norm
    want = torch.linalg.matrix_exp(a)
    got = T(ela.matrix_exp(E(a)))
    torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-14 * float(want.abs().max()))


def test_cholesky_result_is_column_major_as_pytorch():
    # LAPACK's factor is returned in place, column-major (strides (1, n)) as PyTorch's, with its
    # upper triangle zeroed in the buffer (no tril pass afterwards).
    torch.manual_seed(5)
    m = torch.randn(5, 5, dtype=torch.float64)
    a = m @ m.mT + 5 * torch.eye(5, dtype=torch.float64)
    want = torch.linalg.cholesky(a)
    got = ember.linalg.cholesky(ember.from_numpy(a.numpy().copy()))
    assert got.stride() == want.stride() == (1, 5)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    batch = ember.linalg.cholesky(ember.from_numpy(a.expand(3, 5, 5).numpy().copy()))
    assert batch.stride() == torch.linalg.cholesky(a.expand(3, 5, 5)).stride()
