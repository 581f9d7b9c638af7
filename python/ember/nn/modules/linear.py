"""Linear modules: ember's C++ Linear, Identity and Bilinear."""
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

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


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
