"""torch.linalg: decompositions, solvers, inverses, determinants, norms and the rest, declared in
C++ (ember._C._linalg; LAPACK on the CPU)."""
from ._C._linalg import *  # noqa: F401,F403
from ._C import _ops


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError's name; ember raises RuntimeError for a failed factorization."""


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.diagonal with the last two dims as the default (a batch of matrices' diagonals)."""
    return _ops.diagonal(A, offset, dim1, dim2)


def matmul(input, other, *, out=None):
    """torch.matmul under torch.linalg's name."""
    return _ops.matmul(input, other, out=out)
