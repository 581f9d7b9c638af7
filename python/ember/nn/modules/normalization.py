"""Normalisation modules: LayerNorm (one fused op), RMSNorm, GroupNorm, LocalResponseNorm, the
instance norms, and ember's batch norms (C++) and SyncBatchNorm."""
import numbers

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

BatchNorm1d, BatchNorm2d = _C._nn.BatchNorm1d, _C._nn.BatchNorm2d
SyncBatchNorm = _C._distributed.SyncBatchNorm

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "LocalResponseNorm", "InstanceNorm1d",
           "InstanceNorm2d", "BatchNorm1d", "BatchNorm2d", "SyncBatchNorm"]


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


class _InstanceNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        fk = _factory(device, dtype)
        if affine:
            self.weight = Parameter(_C._ops.ones(num_features, **fk))
            self.bias = Parameter(_C._ops.zeros(num_features, **fk))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C._ops.zeros(num_features, **fk))
            self.register_buffer("running_var", _C._ops.ones(num_features, **fk))
            self.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

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
