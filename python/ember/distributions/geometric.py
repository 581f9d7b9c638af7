"""torch.distributions.Geometric: the number of failures before the first success of
Bernoulli(probs) trials."""
import ember

from . import constraints
from .distribution import Distribution
from .utils import _ProbsLogits, broadcast_all

__all__ = ['Geometric']


class Geometric(_ProbsLogits, Distribution):
    """Samples are nonnegative integers; probs must be in (0, 1]."""
    arg_constraints = {'probs': constraints.unit_interval,
                       'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_param(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Add an extra check beyond unit_interval
            value = self.probs
            valid = value > 0
            if not valid.all():
                invalid_value = value.data[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {repr(self)} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(Geometric, batch_shape, _instance,
                                 **self._expanded_params(batch_shape))

    @property
    def mean(self):
        return 1. / self.probs - 1.

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1. / self.probs - 1.) / self.probs

    def sample(self, sample_shape=ember.Size()):
        # Inversion: floor(log U / log(1 - p)) for U in [tiny, 1).
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.empty(shape, dtype=self.probs.dtype,
                            device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # At p == 1 the value 0 is certain: 0 * log(0) is taken as 0.
        probs = probs.masked_fill((probs == 1) & (value == 0), 0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return ember.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction='none') / self.probs
