"""torch.distributions.MultivariateNormal: N(loc, Sigma) given by the covariance, the precision
or the lower Cholesky factor of the covariance (scale_tril), which is what it keeps."""
import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ['MultivariateNormal']


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance x^T (L L^T)^-1 x for batches of lower-triangular L and
    vectors x whose batch shape only broadcasts with L's: x is reshaped and permuted so that
    one batched triangular solve covers all, without expanding L."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]

    # Assume that bL.shape = (i, 1, n, n), bx.shape = (..., i, j, n),
    # we are going to make bx have shape (..., 1, j,  i, 1, n) to apply batched tri.solve
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # Reshape bx with the shape (..., 1, i, j, 1, n)
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for (sL, sx) in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sL, sL)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    # Permute bx to make it have shape (..., 1, j, i, 1, n)
    permute_dims = (list(range(outer_batch_dims)) +
                    list(range(outer_batch_dims, new_batch_dims, 2)) +
                    list(range(outer_batch_dims + 1, new_batch_dims, 2)) +
                    [new_batch_dims])
    bx = bx.permute(permute_dims)

    flat_L = bL.reshape(-1, n, n)  # shape = b x n x n
    flat_x = bx.reshape(-1, flat_L.size(0), n)  # shape = c x b x n
    flat_x_swap = flat_x.permute(1, 2, 0)  # shape = b x n x c
    M_swap = ember.linalg.solve_triangular(flat_L, flat_x_swap,
                                           upper=False).pow(2).sum(-2)  # shape = b x c
    M = M_swap.t()  # shape = c x b

    # Now we revert the above reshape and permute operators.
    permuted_M = M.reshape(bx.shape[:-1])  # shape = (..., 1, j, i, 1)
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_M = permuted_M.permute(permute_inv_dims)  # shape = (..., 1, i, j, 1)
    return reshaped_M.reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: the Cholesky factor of P with its
    rows and columns reversed, transposed back, is the inverse of the wanted factor
    (https://nbviewer.jupyter.org/gist/fehiepsi/5ef8e09e61604f10607380467eb82006)."""
    Lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    L_inv = ember.transpose(ember.flip(Lf, (-2, -1)), -2, -1)
    Id = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    L = ember.linalg.solve_triangular(L_inv, Id, upper=False)
    return L


def _one_matrix(covariance_matrix, precision_matrix, scale_tril):
    """The one given of the three matrix parameterizations (a ValueError unless exactly one)."""
    if (covariance_matrix is not None) + (scale_tril is not None) + \
            (precision_matrix is not None) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                         "may be specified.")
    if scale_tril is not None:
        return 'scale_tril', scale_tril
    if covariance_matrix is not None:
        return 'covariance_matrix', covariance_matrix
    return 'precision_matrix', precision_matrix


def _scale_tril_of(name, matrix):
    """The lower Cholesky factor of the covariance, from the given parameterization."""
    if name == 'scale_tril':
        return matrix
    if name == 'covariance_matrix':
        return ember.linalg.cholesky(matrix)
    return _precision_to_scale_tril(matrix)


class MultivariateNormal(Distribution):
    """Exactly one of covariance_matrix, precision_matrix and scale_tril; scale_tril is the
    cheapest (the others are factored)."""
    arg_constraints = {'loc': constraints.real_vector,
                       'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite,
                       'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _one_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == 'scale_tril' else name
            raise ValueError(f"{what} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = ember.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))

        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        matrices = {name: self.__dict__[name].expand(cov_shape)
                    for name in ('covariance_matrix', 'scale_tril', 'precision_matrix')
                    if name in self.__dict__}
        return self._expand_with(MultivariateNormal, batch_shape, _instance,
                                 loc=self.loc.expand(loc_shape),
                                 _unbroadcasted_scale_tril=self._unbroadcasted_scale_tril,
                                 **matrices)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        return (ember.matmul(self._unbroadcasted_scale_tril,
                             self._unbroadcasted_scale_tril.mT)
                .expand(self._batch_shape + self._event_shape + self._event_shape))

    @lazy_property
    def precision_matrix(self):
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        else:
            return H.expand(self._batch_shape)
