"""torch.nn.utils.parametrizations: orthogonal, spectral_norm and (PyTorch 2.x) weight_norm, as
parametrizations registered with parametrize.register_parametrization. PyTorch's maps and
formulas; see parametrize.py for how ember's modules take a parametrization."""
from enum import Enum, auto

from ... import _C
from ...autograd import no_grad
from ..modules.module import Module
from .. import functional as F
from . import _native, parametrize
from .spectral_norm import _default_output_dim
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q, eps=None):
    n, k = Q.size(-2), Q.size(-1)
    Id = _C._ops.eye(k, dtype=Q.dtype, device=Q.device)
    # A reasonable eps, but not too large
    eps = 10. * n * _native.package().finfo(Q.dtype).eps
    return _C._ops.allclose(Q.mH @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) real and non-negative."""
    X, tau = _C._ops.geqrf(A)
    Q = _native.package().linalg.householder_product(X, tau)
    # The diagonal of X is the diagonal of R: normalise by its signs.
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        # Complex Householder reflectors cannot represent every unitary matrix (the taus are
        # not recoverable from the reflectors), so PyTorch refuses that combination.
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # Here n > k and X is a tall matrix
        if self.orthogonal_map == _OrthMaps.matrix_exp or \
                self.orthogonal_map == _OrthMaps.cayley:
            # n x k - k(k-1)/2 parameters: the lower triangle, embedded in a square matrix.
            X = X.tril()
            if n != k:
                X = _C._ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)],
                                dim=-1)
            A = X - X.mH
            # A is skew-symmetric (or skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _C._ops.matrix_exp(A)
            elif self.orthogonal_map == _OrthMaps.cayley:
                # The Cayley retraction (I+A/2)(I-A/2)^{-1}
                Id = _C._ops.eye(n, dtype=A.dtype, device=A.device)
                Q = _native.package().linalg.solve(_C._ops.add(Id, A, alpha=-0.5),
                                                   _C._ops.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # X is real here (no complex householder)
            A = X.tril(diagonal=-1)
            tau = 2. / (1. + (A * A).sum(dim=-2))
            Q = _native.package().linalg.householder_product(A, tau)
            # The diagonal of X is 1's and -1's; it is not differentiated nor updated, hence
            # PyTorch's cast to int. ember's cast to an integer type keeps the graph, so the
            # diagonal is also detached.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)

        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")

        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n

        # Every path copies Q.
        if not hasattr(self, "base"):
            # Without the trivialization only the Householder map can be inverted (no closed
            # form gives the X whose matrix_exp / Cayley map is a given Q).
            if self.orthogonal_map == _OrthMaps.cayley or \
                    self.orthogonal_map == _OrthMaps.matrix_exp:
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # Orthogonalise Q by the QR decomposition, with diag(R) > 0 (else Q = (-Q)(-Id)
            # would also be a QR decomposition); diag(A) holds the signs.
            A, tau = _C._ops.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            # LAPACK returns tau exactly zero where it uses no reflection.
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.] *= -1
            return A.mT if transpose else A
        else:
            if n == k:
                if not _is_orthogonal(Q):
                    Q = _make_orthogonal(Q)
                else:
                    Q = Q.clone()
            else:
                # Complete Q into a full n x n orthogonal matrix
                N = _C._ops.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype,
                                  device=Q.device)
                Q = _C._ops.cat([Q, N], dim=-1)
                Q = _make_orthogonal(Q)
            self.base = Q
            # -Id, as the Householder map uses the diagonal: householder(zeros(m, n)) is then
            # eye(m, n).
            neg_Id = _C._ops.zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.)
            return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrizes module.<name> (a matrix or a batch of them) as an orthogonal (unitary)
    matrix: orthonormal columns when it is tall, rows when it is wide. orthogonal_map:
    "matrix_exp", "cayley" or "householder" (default: "matrix_exp" for square or complex,
    "householder" otherwise). With use_trivialization (default) an extra base matrix is kept in
    module.parametrizations.<name>[0].base. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(
            "Module '{}' has no parameter or buffer with name '{}'".format(module, name)
        )

    # The maps on the sphere would do for vectors, but would surprise more than they help.
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")

    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or \
            weight.is_complex() else "householder"

    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f'Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _SpectralNorm(Module):

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")

        if n_power_iterations <= 0:
            raise ValueError('Expected n_power_iterations to be positive, but '
                             'got n_power_iterations={}'.format(n_power_iterations))
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A vector needs no approximation (see forward).
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()

            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer('_u', F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer('_v', F.normalize(v, dim=0, eps=self.eps))

            # Start from reasonable u, v: 15 iterations of the power method.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        assert weight.ndim > 1
        if self.dim != 0:
            # permute dim to front
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (normalize(out=)): under DataParallel the replica on the
        # first device shares the buffers' storage, so the update reaches the module (see
        # PyTorch's note in torch/nn/utils/spectral_norm.py).
        assert weight_mat.ndim > 1
        with no_grad():
            for _ in range(n_power_iterations):
                # Spectral norm of weight equals `u^T W v`, u and v the first left and right
                # singular vectors, which this power iteration approximates.
                self._u = F.normalize(_C._ops.mv(weight_mat, self._v),
                                      dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(_C._ops.mv(weight_mat.t(), self._u),
                                      dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            # Faster and exact for a vector
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Cloned after the in-place update, so that a backward through two forwards (a GAN's
        # D(real) - D(fake)) does not see its u and v changed.
        contiguous = _native.package().contiguous_format
        u = self._u.clone(memory_format=contiguous)
        v = self._v.clone(memory_format=contiguous)
        sigma = _C._ops.dot(u, _C._ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # The assigned value is taken as it is (not checked against the constraint).
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrizes module.<name> as W / sigma(W), sigma the largest singular value estimated by
    n_power_iterations of the power method at each access in training mode (the vectors live in
    module.parametrizations.<name>[0]._u and _v). dim: the output dim (default 0, 1 for
    ConvTranspose). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(
            "Module '{}' has no parameter or buffer with name '{}'".format(module, name)
        )
    if dim is None:
        dim = _default_output_dim(module)
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _WeightNorm(Module):

    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module, name="weight", dim=0):
    """PyTorch 2.x: parametrizes module.<name> as g * v / ||v|| (norm over every dim but `dim`;
    dim=None: the whole tensor), g in module.parametrizations.<name>.original0 and v in
    original1. Returns the module. (PyTorch also loads the old weight_norm's <name>_g / <name>_v
    state-dict keys into it; ember's modules have no load_state_dict pre-hooks, so that
    conversion is not done.)"""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
