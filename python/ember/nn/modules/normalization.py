"""Normalisation modules: LayerNorm (one fused op), RMSNorm, GroupNorm, LocalResponseNorm,
CrossMapLRN2d, the instance norms, ember's batch norms (C++) and SyncBatchNorm, and the lazy
batch and instance norms."""
import numbers

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

BatchNorm1d, BatchNorm2d, BatchNorm3d = (_C._nn.BatchNorm1d, _C._nn.BatchNorm2d,
                                         _C._nn.BatchNorm3d)
SyncBatchNorm = _C._distributed.SyncBatchNorm

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "LocalResponseNorm", "CrossMapLRN2d",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "BatchNorm1d", "BatchNorm2d",
           "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


def _factory(device, dtype):
    return {"device": device, "dtype": dtype if dtype is not None else _C.float32}


class LayerNorm(Module):
    """Normalises over the last dims (normalized_shape), with an elementwise affine map."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C._ops.ones(self.normalized_shape, **_factory(device, dtype)))
            if bias:
                self.bias = Parameter(_C._ops.zeros(self.normalized_shape,
                                                    **_factory(device, dtype)))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the last dims, times a weight."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C._ops.ones(self.normalized_shape, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Normalises each group of channels; an affine map per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels, eps,
                                                                     affine)
        if affine:
            self.weight = Parameter(_C._ops.ones(num_channels, **_factory(device, dtype)))
            self.bias = Parameter(_C._ops.zeros(num_channels, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _make_norm_state(m, num_features, fk):
    """The affine parameters and running statistics of a batch or instance norm of num_features
    channels (None where affine or track_running_stats is off)."""
    m.num_features = num_features
    if m.affine:
        m.weight = Parameter(_C._ops.ones(num_features, **fk))
        m.bias = Parameter(_C._ops.zeros(num_features, **fk))
    else:
        m.register_parameter("weight", None)
        m.register_parameter("bias", None)
    if m.track_running_stats:
        m.register_buffer("running_mean", _C._ops.zeros(num_features, **fk))
        m.register_buffer("running_var", _C._ops.ones(num_features, **fk))
        m.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64))
    else:
        m.register_buffer("running_mean", None)
        m.register_buffer("running_var", None)
        m.register_buffer("num_batches_tracked", None)


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel LRN, as PyTorch keeps it: x / (k + alpha / size * s) ^ beta, where
    s sums x^2 over channels 0 .. c + p - 1 (p = (size - 1) // 2 + 1) less channels 1 .. c - p
    (its running window never drops channel 0)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels, p = input.shape[1], (self.size - 1) // 2 + 1
        run = (input * input).cumsum(1)
        c = _C._ops.arange(channels, device=input.device)
        s = run.index_select(1, (c + p - 1).clamp(max=channels - 1))
        # Channels 1 .. c - p (none until c > p: index 0 gives run[0] - run[0]).
        s = s - (run.index_select(1, (c - p).clamp(min=0)) - run.narrow(1, 0, 1))
        return input * (self.k + self.alpha / self.size * s).pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _InstanceNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _make_norm_state(self, num_features, _factory(device, dtype))

    def forward(self, input):
        expected = self._spatial + 2
        if input.dim() not in (expected - 1, expected):
            raise ValueError(f"expected {expected - 1}D or {expected}D input (got "
                             f"{input.dim()}D input)")
        unbatched = input.dim() == expected - 1
        x = input.unsqueeze(0) if unbatched else input
        use_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_stats, self.momentum, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3


class _LazyNorm:
    """num_features from the first input's channels (dim 1, or 0 when unbatched): the state is
    made then, as PyTorch's lazy modules (the module keeps its lazy class)."""

    def _lazy_init(self, eps, momentum, affine, track_running_stats, device, dtype):
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.num_features = 0
        self._lazy = _factory(device, dtype)
        for name in ("weight", "bias"):
            self.register_parameter(name, None)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            self.register_buffer(name, None)

    def _materialize(self, input, unbatched_dims):
        if hasattr(self, "_lazy"):
            _make_norm_state(self, input.shape[0 if input.dim() == unbatched_dims else 1],
                             self._lazy)
            del self._lazy

    def has_uninitialized_params(self):
        return hasattr(self, "_lazy")


class _LazyBatchNorm(_LazyNorm, Module):
    _dims = ()  # the input ranks accepted

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        Module.__init__(self)
        self._lazy_init(eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got "
                             f"{input.dim()}D input)")
        self._materialize(input, -1)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class LazyBatchNorm1d(_LazyBatchNorm):
    _dims = (2, 3)


class LazyBatchNorm2d(_LazyBatchNorm):
    _dims = (4,)


class LazyBatchNorm3d(_LazyBatchNorm):
    _dims = (5,)


class _LazyInstanceNorm(_LazyNorm, _InstanceNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        Module.__init__(self)
        self._lazy_init(eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        self._materialize(input, self._spatial + 1)
        return _InstanceNorm.forward(self, input)


class LazyInstanceNorm1d(_LazyInstanceNorm):
    _spatial = 1


class LazyInstanceNorm2d(_LazyInstanceNorm):
    _spatial = 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    _spatial = 3
