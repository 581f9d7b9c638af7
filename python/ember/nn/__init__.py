"""ember.nn: modules and layers (torch.nn's names). Subclass Module, assign layers and
Parameters as attributes in __init__, and define forward: the C++ core sees the result as one of
its own modules (DataParallel replicates it, optimizers and state dicts see its parameters)."""
from .. import _C
from .parameter import Parameter
from . import functional, init, parallel

Module = _C._nn.Module
Linear = _C._nn.Linear
Conv2d = _C._nn.Conv2d
MaxPool2d = _C._nn.MaxPool2d
AvgPool2d = _C._nn.AvgPool2d
AdaptiveAvgPool2d = _C._nn.AdaptiveAvgPool2d
ReLU = _C._nn.ReLU
Sigmoid = _C._nn.Sigmoid
Tanh = _C._nn.Tanh
Softmax = _C._nn.Softmax
LogSoftmax = _C._nn.LogSoftmax
Flatten = _C._nn.Flatten
Dropout = _C._nn.Dropout
Embedding = _C._nn.Embedding
BatchNorm1d = _C._nn.BatchNorm1d
BatchNorm2d = _C._nn.BatchNorm2d
SyncBatchNorm = _C._distributed.SyncBatchNorm
Sequential = _C._nn.Sequential
DataParallel = parallel.DataParallel


class Identity(Module):
    """Returns its input."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def extra_repr(self):
        return ""


class CrossEntropyLoss(_Loss):
    """functional.cross_entropy as a module."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input, target):
        return functional.cross_entropy(input, target, weight=self.weight,
                                        ignore_index=self.ignore_index, reduction=self.reduction,
                                        label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """functional.nll_loss as a module."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return functional.nll_loss(input, target, weight=self.weight,
                                   ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """functional.mse_loss as a module."""

    def forward(self, input, target):
        return functional.mse_loss(input, target, reduction=self.reduction)
