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
    """The dot product of two 1-D tensors (no conjugate: ember is real)."""
    return _E.dot(input, other)


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
