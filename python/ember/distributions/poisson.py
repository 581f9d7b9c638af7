"""torch.distributions.Poisson: counts of events at rate `rate`."""
import ember

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _poisson, broadcast_all

__all__ = ['Poisson']


class Poisson(ExponentialFamily):
    """The Poisson distribution; samples are float counts, as torch.poisson gives."""
    arg_constraints = {'rate': constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(Poisson, batch_shape, _instance, ('rate',))

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return _poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (ember.log(self.rate), )

    def _log_normalizer(self, x):
        return ember.exp(x)
