"""torch.distributions.Wishart: distributions over positive-definite matrices, the covariance
of df draws of a MultivariateNormal; rsample by the Bartlett decomposition."""
import math
import warnings
from numbers import Number

import ember

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ['Wishart']

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum of digamma(x - i / 2) for i < p."""
    assert x.gt((p - 1) / 2).all(), "Wrong domain for multivariate digamma function."
    return ember.digamma(
        x.unsqueeze(-1)
        - ember.arange(p, dtype=x.dtype, device=x.device).div(2).expand(tuple(x.shape) + (-1,))
    ).sum(-1)


def _clamp_above_eps(x):
    # We assume positive input for this function
    return x.clamp(min=ember.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma) with Sigma given as exactly one of covariance_matrix,
    precision_matrix and scale_tril; df must exceed the dimension minus one."""
    arg_constraints = {
        'covariance_matrix': constraints.positive_definite,
        'precision_matrix': constraints.positive_definite,
        'scale_tril': constraints.lower_cholesky,
        'df': constraints.greater_than(0),
    }
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        assert (covariance_matrix is not None) + (scale_tril is not None) + \
            (precision_matrix is not None) == 1, \
            "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."

        name, param = next((n, p) for n, p in (('covariance_matrix', covariance_matrix),
                                                ('precision_matrix', precision_matrix),
                                                ('scale_tril', scale_tril)) if p is not None)

        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")

        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]

        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1]-1}.")

        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))

        # The bound on df depends on the dimension: this instance's own constraint (PyTorch
        # overwrites the class's dict, changing it for every Wishart).
        self.arg_constraints = dict(Wishart.arg_constraints,
                                    df=constraints.greater_than(event_shape[-1] - 1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.")

        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(name, param)
        self._dist_chi2 = self._bartlett_chi2(self.df, batch_shape)

    def _bartlett_chi2(self, df, batch_shape):
        """The squared diagonal of the Bartlett factor: Chi2(df - i) for row i."""
        return Chi2(df=(
            df.unsqueeze(-1)
            - ember.arange(
                self._event_shape[-1],
                dtype=self._unbroadcasted_scale_tril.dtype,
                device=self._unbroadcasted_scale_tril.device,
            ).expand(tuple(batch_shape) + (-1,))
        ))

    def expand(self, batch_shape, _instance=None):
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        matrices = {name: self.__dict__[name].expand(cov_shape)
                    for name in ('covariance_matrix', 'scale_tril', 'precision_matrix')
                    if name in self.__dict__}
        new = self._expand_with(
            Wishart, batch_shape, _instance, arg_constraints=self.arg_constraints,
            _unbroadcasted_scale_tril=self._unbroadcasted_scale_tril.expand(cov_shape),
            df=self.df.expand(batch_shape), _batch_dims=[-(x + 1) for x in range(len(batch_shape))],
            **matrices)
        new._dist_chi2 = new._bartlett_chi2(new.df, batch_shape)
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        return (
            self._unbroadcasted_scale_tril @ self._unbroadcasted_scale_tril.transpose(-2, -1)
        ).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        identity = ember.eye(
            self._event_shape[-1],
            device=self._unbroadcasted_scale_tril.device,
            dtype=self._unbroadcasted_scale_tril.dtype,
        )
        return ember.cholesky_solve(
            identity, self._unbroadcasted_scale_tril
        ).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)  # no mode for df < p + 1
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix  # has shape (batch_shape x event_shape)
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            V.pow(2) + ember.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        """L A A^T L^T with A lower triangular: sqrt(Chi2(df - i)) on the diagonal, standard
        normals below."""
        p = self._event_shape[-1]  # has singleton shape

        # Implemented Sampling using Bartlett decomposition
        noise = _clamp_above_eps(
            self._dist_chi2.rsample(sample_shape).sqrt()
        ).diag_embed(dim1=-2, dim2=-1)

        # The strict lower triangle in row order, as tril_indices(p, p, offset=-1) orders it.
        noise = noise + vec_to_tril_matrix(ember.randn(
            tuple(sample_shape) + tuple(self._batch_shape) + (int(p * (p - 1) / 2),),
            dtype=noise.dtype,
            device=noise.device,
        ), diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _is_singular(self, sample):
        """Per sample: whether any matrix of its batch failed to be positive definite."""
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        return is_singular

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Redraws samples that came out numerically singular, up to max_try_correction
        times (10 by default)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)

        # Below part is to improve numerical stability temporally and should be removed in the
        # future
        is_singular = self._is_singular(sample)
        if is_singular.any():
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = is_singular.view(tuple(is_singular.shape)
                                        + (1,) * (len(self._batch_shape) + 2))
                sample = ember.where(mask, sample_new, sample)
                is_singular = self._is_singular(sample)
                if not is_singular.any():
                    break

        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return (
            - nu * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(
                dim1=-2, dim2=-1).log().sum(-1))
            - ember.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet
            - ember.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
                dim1=-2, dim2=-1).sum(dim=-1) / 2
        )

    def entropy(self):
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return (
            (p + 1) * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(
                dim1=-2, dim2=-1).log().sum(-1))
            + ember.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu = self.df  # has shape (batch_shape)
        p = self._event_shape[-1]  # has singleton shape
        return - self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (
            (y + (p + 1) / 2) * (- ember.linalg.slogdet(- 2 * x).logabsdet + _log_2 * p)
            + ember.mvlgamma(y + (p + 1) / 2, p=p)
        )
