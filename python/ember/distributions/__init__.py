"""torch.distributions' most used families: Categorical (policy gradients: sample, log_prob,
entropy), Bernoulli and Normal (with rsample), over ember's ops so that log_prob and rsample
differentiate. Arguments, shapes (sample_shape + batch_shape + event_shape) and formulas follow
PyTorch 1.13."""
import math

from .. import _C
from .._size import Size
from ..autograd import no_grad

__all__ = ["Distribution", "Categorical", "Bernoulli", "Normal"]

_ops = _C._ops
_F = _C._F


def _size(shape):
    return tuple(shape) if shape is not None else ()


def _broadcast(a, b):
    """The broadcast of two shapes (a ValueError naming both when they do not)."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def _tiny(dtype):  # the smallest normal number: log of a zero probability stays finite
    return 2.2250738585072014e-308 if dtype == _C.float64 else 1.1754943508222875e-38


def _lowest(dtype):
    return -1.7976931348623157e308 if dtype == _C.float64 else -3.4028234663852886e38


def _tensor(x):
    return x if isinstance(x, _C.Tensor) else _C.tensor(float(x))


class Distribution:
    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)

    @property
    def batch_shape(self):
        return Size(self._batch_shape)

    @property
    def event_shape(self):
        return Size(self._event_shape)

    def _extended_shape(self, sample_shape=()):
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample")

    def sample_n(self, n):
        return self.sample((n,))

    @property
    def stddev(self):
        return self.variance.sqrt()

    def perplexity(self):
        return self.entropy().exp()

    def __repr__(self):
        return f"{type(self).__name__}()"


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Categorical(Distribution):
    """One of K categories (the last dim of probs or logits): sample gives indices (int64)."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=_tiny(self.probs.dtype)).log()
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = _F.softmax(logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(tuple(self.probs.shape[:-1]), (), validate_args)

    @property
    def param_shape(self):
        return tuple(self.probs.shape)

    @property
    def mean(self):
        return _ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def variance(self):
        return _ops.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        sample_shape = _size(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples = _ops.multinomial(probs_2d, n, True).t()
        return samples.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        value = value.long().unsqueeze(-1)
        shape = _broadcast(value.shape, tuple(self.logits.shape[:-1]) + (1,))
        value = value.expand(shape)
        log_pmf = self.logits.expand(shape[:-1] + (self._num_events,))
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=_lowest(self.logits.dtype))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _ops.arange(self._num_events, dtype=_C.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values


class Bernoulli(Distribution):
    """1 with probability probs (or sigmoid(logits)), else 0."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.probs = probs = _tensor(probs)
            eps = 1.1920928955078125e-07
            p = probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (1 - p).log()
        else:
            self.logits = logits = _tensor(logits)
            self.probs = logits.sigmoid()
        super().__init__(tuple(self.probs.shape), (), validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return _ops.bernoulli(self.probs.expand(self._extended_shape(_size(sample_shape))))

    def log_prob(self, value):
        shape = _broadcast(self.logits.shape, value.shape)
        return -_F.binary_cross_entropy_with_logits(self.logits.expand(shape),
                                                    value.expand(shape), reduction="none")

    def entropy(self):
        return _F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Normal(Distribution):
    """N(loc, scale^2); rsample is loc + scale * eps, differentiable in both."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = _tensor(loc), _tensor(scale)
        shape = _broadcast(loc.shape, scale.shape)
        self.loc, self.scale = loc.expand(shape), scale.expand(shape)
        super().__init__(shape, (), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_size(sample_shape))
        eps = _ops.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + _ops.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
