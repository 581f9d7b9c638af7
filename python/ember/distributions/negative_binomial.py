"""torch.distributions.NegativeBinomial: failures before total_count successes of Bernoulli
trials whose success probability is 1 - probs (probs is each trial's failure probability)."""
import ember

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _poisson, _ProbsLogits, lazy_property

__all__ = ['NegativeBinomial']


class NegativeBinomial(_ProbsLogits, Distribution):
    """Sampled as a gamma-Poisson mixture: Poisson(Gamma(total_count, exp(-logits)))."""
    arg_constraints = {'total_count': constraints.greater_than_eq(0),
                       'probs': constraints.half_open_interval(0., 1.),
                       'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self.total_count, = self._set_param(probs, logits, total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(NegativeBinomial, batch_shape, _instance, ('total_count',),
                                 **self._expanded_params(batch_shape))

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # Note we avoid validating because self.total_count can be zero.
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        F = ember.nn.functional
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits) +
                                 value * F.logsigmoid(self.logits))
        log_normalization = (-ember.lgamma(self.total_count + value)
                             + ember.lgamma(1. + value) + ember.lgamma(self.total_count))
        # The value 0 of NegativeBinomial(0, p) is certain.
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0., 0.)
        return log_unnormalized_prob - log_normalization
