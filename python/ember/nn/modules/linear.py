"""Linear modules: ember's C++ Linear, Identity, Bilinear and LazyLinear."""
import math

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

Linear = _C._nn.Linear

# MultiheadAttention's out_proj class in PyTorch (a marker for its quantisation tools).
NonDynamicallyQuantizableLinear = type("NonDynamicallyQuantizableLinear", (Linear,), {
    "__module__": __name__, "__ember_native__": True})

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear", "LazyLinear"]


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as PyTorch's)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Bilinear(Module):
    """y = x1^T A x2 + b."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = (in1_features, in2_features,
                                                                   out_features)
        kw = {"device": device, "dtype": dtype or _C.float32}
        self.weight = Parameter(_C._ops.empty(out_features, in1_features, in2_features, **kw))
        if bias:
            self.bias = Parameter(_C._ops.empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Module):
    """A Linear whose in_features is the first input's last dim: its parameters are made (and
    initialised as Linear's) at the first call, as PyTorch's lazy modules."""

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = 0, out_features
        self._lazy = dict(bias=bias, device=device, dtype=dtype)
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)

    def forward(self, input):
        if hasattr(self, "_lazy"):
            a = self._lazy
            eager = Linear(input.shape[-1], self.out_features, a["bias"], device=a["device"],
                           dtype=a["dtype"] or input.dtype)
            self.in_features = input.shape[-1]
            self.weight = eager.weight
            if eager.bias is not None:
                self.bias = eager.bias
            del self._lazy
        return F.linear(input, self.weight, self.bias)

    def has_uninitialized_params(self):
        return hasattr(self, "_lazy")

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
