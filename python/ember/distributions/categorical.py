"""torch.distributions.Categorical: one of K categories (the last dim of probs or logits);
samples are int64 indices, as torch.multinomial draws them."""
import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import _expand_support, _one_of, _ProbsLogits

__all__ = ['Categorical']


class Categorical(_ProbsLogits, Distribution):
    """probs need only be nonnegative, finite and of nonzero sum: they are normalized (and
    probs returns the normalized values). logits are unnormalized log probabilities, normalized
    likewise."""
    arg_constraints = {'probs': constraints.simplex,
                       'logits': constraints.real_vector}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            # Normalize
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._num_events = self._param.size()[-1]
        batch_shape = (self._param.size()[:-1] if self._param.ndimension() > 1
                       else ember.Size())
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        param_shape = tuple(batch_shape) + (self._num_events,)
        return self._expand_with(Categorical, batch_shape, _instance,
                                 _num_events=self._num_events,
                                 **self._expanded_params(param_shape))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    def sample(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = ember.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        # -inf logits (zero probabilities) would make 0 * -inf = nan; the lowest float makes 0.
        min_real = ember.finfo(self.logits.dtype).min
        logits = ember.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.long, device=self._param.device)
        return _expand_support(values, self._batch_shape, expand)
