"""torch.linalg: decompositions, solvers, inverses, determinants, norms and the rest, declared in
C++ (ember._C._linalg; LAPACK on the CPU)."""
from ._C._linalg import *  # noqa: F401,F403


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError's name; ember raises RuntimeError for a failed factorization."""
