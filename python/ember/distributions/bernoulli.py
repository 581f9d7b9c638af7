"""torch.distributions.Bernoulli: 1 with probability probs (sigmoid(logits)), else 0."""
import math

import ember

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _expand_support, _ProbsLogits, broadcast_all

__all__ = ['Bernoulli']


class Bernoulli(_ProbsLogits, ExponentialFamily):
    """The Bernoulli distribution, parameterized by probs or logits (log odds), not both."""
    arg_constraints = {'probs': constraints.unit_interval,
                       'logits': constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_param(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(Bernoulli, batch_shape, _instance,
                                 **self._expanded_params(batch_shape))

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        return mode.masked_fill(self.probs == 0.5, math.nan)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -ember.nn.functional.binary_cross_entropy_with_logits(logits, value,
                                                                     reduction='none')

    def entropy(self):
        return ember.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                                    reduction='none')

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        return _expand_support(values, self._batch_shape, expand)

    @property
    def _natural_params(self):
        return (ember.log(self.probs / (1 - self.probs)), )

    def _log_normalizer(self, x):
        return ember.log(1 + ember.exp(x))
