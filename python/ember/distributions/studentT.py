"""torch.distributions.StudentT: loc + scale * X / sqrt(Z / df), X ~ Normal(0, 1),
Z ~ Chi2(df)."""
import math

import ember

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ['StudentT']


class StudentT(Distribution):
    """Student's t with df degrees of freedom, location loc and scale scale."""
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real,
                       'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)  # undefined for df <= 1

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, infinite for 1 < df <= 2, undefined for df <= 1.
        m = ember.where(self.df > 2, self.scale.pow(2) * self.df / (self.df - 2), self.df)
        m = m.masked_fill((self.df <= 2) & (self.df > 1), math.inf)
        return m.masked_fill(self.df <= 1, math.nan)

    def __init__(self, df, loc=0., scale=1., validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(StudentT, batch_shape, _instance, ('df', 'loc', 'scale'),
                                 _chi2=self._chi2.expand(batch_shape))

    def rsample(self, sample_shape=ember.Size()):
        # NOTE: This does not agree with scipy implementation as much as other distributions.
        # (see https://github.com/fritzo/notebooks/blob/master/debug-student-t.ipynb). Using
        # DoubleTensor parameters seems to help.
        #   X ~ Normal(0, 1)
        #   Z ~ Chi2(df)
        #   Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ember.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() +
             0.5 * self.df.log() +
             0.5 * math.log(math.pi) +
             ember.lgamma(0.5 * self.df) -
             ember.lgamma(0.5 * (self.df + 1.)))
        return -0.5 * (self.df + 1.) * ember.log1p(y**2. / self.df) - Z

    def entropy(self):
        lbeta = (ember.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - ember.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log() +
                0.5 * (self.df + 1) *
                (ember.digamma(0.5 * (self.df + 1)) - ember.digamma(0.5 * self.df)) +
                0.5 * self.df.log() + lbeta)
