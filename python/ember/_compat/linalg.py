"""Linear algebra made of matmuls: kron, tensordot, cdist, pdist. Part of
ember._compat (see its __init__)."""
import builtins
import functools
import warnings

from ._registry import _both, _is_tensor, _out, _torch
from .shapes import triu_indices

_E = None  # the ember module, set by install()


# ================================================================================================
# linear algebra made of matmuls
# ================================================================================================


@_both
def kron(input, other):
    """The Kronecker product: every element of input times the whole of other."""
    n = builtins.max(input.dim(), other.dim())
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    a_shape = [s for d in a.shape for s in (d, 1)]
    b_shape = [s for d in b.shape for s in (1, d)]
    prod = a.reshape(a_shape) * b.reshape(b_shape)
    return prod.reshape([x * y for x, y in zip(a.shape, b.shape)])


@_torch
def tensordot(a, b, dims=2, out=None):
    """Contracts a's and b's dims (the last `dims` of a with the first of b, or two lists)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        if _is_tensor(dims):
            dims = dims.tolist()
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [d % a.dim() for d in da]
    db = [d % b.dim() for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
        k *= a.shape[x]
    am = a.permute(*free_a, *da).reshape(-1, k)
    bm = b.permute(*db, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _out(am.mm(bm).reshape(shape), out)


@_both
def vdot(input, other):
    """The dot product of two 1-D tensors, the first conjugated."""
    return _E.dot(input.conj(), other)


@_torch
def chain_matmul(*matrices, out=None):
    """The product of the matrices, left to right (deprecated in PyTorch for linalg.multi_dot)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    return _out(functools.reduce(_E.mm, matrices), out)


@_torch
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance of each row of x1 to each of x2: (B, P, M), (B, R, M) -> (B, P, R)."""
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary"
        and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matmul instead of a (P, R, M) difference.
        sq1 = (x1 * x1).sum(-1, keepdim=True)
        sq2 = (x2 * x2).sum(-1, keepdim=True)
        d2 = sq1 - 2 * _E.matmul(x1, x2.transpose(-1, -2)) + sq2.transpose(-1, -2)
        pos = d2 > 0  # sqrt's gradient at 0 is infinite: 0 there, as PyTorch's cdist gives
        return _E.where(pos, _E.sqrt(_E.where(pos, d2, _E.ones_like(d2))), _E.zeros_like(d2))
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _E.norm(d, p, dim=-1)


@_torch
def pdist(input, p=2):
    """The p-norm distances between the rows of input, i < j, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    return _E.norm(input[i] - input[j], p, dim=-1)


# ================================================================================================
# randomized low-rank SVD and PCA (Halko, Martinsson and Tropp 2009, as torch._lowrank)
# ================================================================================================


def _approximate_basis(a, q, niter, m=None):
    """Q with q orthonormal columns such that Q Q^T (a - m) approximates a - m (their Algorithm
    4.4: a random range, then niter subspace iterations, each step re-orthonormalised)."""
    dtype = a.dtype if a.is_floating_point() else _E.float32
    r = _E.randn(a.shape[-1], q, dtype=dtype, device=a.device)
    a_t = a.transpose(-2, -1)
    m_t = None if m is None else m.transpose(-2, -1)

    def times(x, mat, shift):  # (mat - shift) @ x without forming mat - shift
        return mat @ x if shift is None else mat @ x - shift @ x

    basis = _E.linalg.qr(times(r, a, m)).Q
    for _ in range(niter):
        basis = _E.linalg.qr(times(basis, a_t, m_t)).Q
        basis = _E.linalg.qr(times(basis, a, m)).Q
    return basis


def _svd_lowrank(a, q, niter, m):
    rows, cols = a.shape[-2:]
    a_t = a.transpose(-2, -1)
    m_t = None if m is None else m.transpose(-2, -1)
    if rows < cols or cols > q:
        # The basis of a^T's range: b_t = (a - m) Q is (rows, q).
        basis = _approximate_basis(a_t, q, niter, m_t)
        b_t = a @ basis if m is None else a @ basis - m @ basis
        u, s, vh = _E.linalg.svd(b_t, full_matrices=False)
        return u, s, basis @ vh.transpose(-2, -1)
    basis = _approximate_basis(a, q, niter, m)
    b = a_t @ basis if m is None else a_t @ basis - m_t @ basis
    u, s, vh = _E.linalg.svd(b.transpose(-2, -1), full_matrices=False)
    return basis @ u, s, vh.transpose(-2, -1)


@_torch
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T for a matrix (or batch) of rank about q, by a
    randomized range finder (results vary with the random seed, as PyTorch's)."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


@_torch
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the principal components of A's rows (centred unless center=False) by
    svd_lowrank; q defaults to min(6, m, n)."""
    rows, cols = A.shape[-2:]
    if q is None:
        q = builtins.min(6, rows, cols)
    elif not 0 <= q <= builtins.min(rows, cols):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={builtins.min(rows, cols)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)


@_torch
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of the singular values (of the last two dims, or of `dim`)."""
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None and input.dim() != 2:
        raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                           f"{input.dim()} dimensions instead.")
    return _out(_E.linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else tuple(dim),
                                      keepdim=keepdim), out)


@_torch
def frobenius_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    """The square root of the sum of squared magnitudes over `dim`."""
    dim = [dim] if isinstance(dim, int) else list(dim)
    return _out(_E.linalg.vector_norm(input, 2, dim, keepdim), out)
