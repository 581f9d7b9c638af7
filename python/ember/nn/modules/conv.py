"""Convolution modules: Conv2d (ember's C++ layer), Conv1d, Conv3d, the transposed ones, and the
lazy ones (in_channels taken from the first input), with PyTorch's parameters, names and
initialisation."""
import math

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

Conv2d = _C._nn.Conv2d

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """The weight (and bias) of a convolution over `n` spatial dims; transposed ones store
    (in, out / groups, *kernel)."""

    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device, dtype):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation, self.output_padding = _tuple(dilation, n), _tuple(output_padding, n)
        self.transposed, self.groups, self.padding_mode = transposed, groups, padding_mode
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        kw = {"device": device, "dtype": dtype or _C.float32}
        self.weight = Parameter(_C._ops.empty(shape, **kw))
        if bias:
            self.bias = Parameter(_C._ops.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s

    def _padded(self, input):
        if self.padding_mode == "zeros":
            return input, self.padding
        pads = []
        for p in reversed(self.padding):
            pads += [p, p]
        return F.pad(input, pads, mode=self.padding_mode), 0


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = len(self.kernel_size)
        output_size = list(output_size)[-n:]
        out = []
        for d in range(n):
            size_in = input.size(d - n)
            least = ((size_in - 1) * self.stride[d] - 2 * self.padding[d] +
                     self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            out.append(output_size[d] - least)
        return tuple(out)


class ConvTranspose1d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class _LazyConv(Module):
    """A convolution whose in_channels is the first input's channel count: its parameters are
    made (and initialised as the eager layer's) at the first call, as PyTorch's lazy modules."""

    _n = 1
    _transposed = False

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *args, bias=True,
                 device=None, dtype=None, **kwargs):
        Module.__init__(self)  # the eager base's __init__ runs at the first call
        self._lazy = dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                          padding=padding, args=args, kwargs=kwargs, bias=bias, device=device,
                          dtype=dtype)
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)

    def _eager_class(self):
        table = {(1, False): Conv1d, (2, False): _Conv2dPython, (3, False): Conv3d,
                 (1, True): ConvTranspose1d, (2, True): ConvTranspose2d, (3, True): ConvTranspose3d}
        return table[(self._n, self._transposed)]

    def _materialize(self, input):
        n = self._n
        in_channels = input.shape[-(n + 1)]
        a = self._lazy
        eager = self._eager_class()(in_channels, a["out_channels"], a["kernel_size"],
                                    a["stride"], a["padding"], *a["args"], bias=a["bias"],
                                    device=a["device"], dtype=a["dtype"] or input.dtype,
                                    **a["kwargs"])
        self.__dict__.update({k: v for k, v in eager.__dict__.items()
                              if k not in ("_parameters", "_buffers", "_modules")})
        self.weight = eager.weight
        if eager.bias is not None:
            self.bias = eager.bias
        self._eager = type(eager)
        del self._lazy

    def forward(self, input, *args):
        if hasattr(self, "_lazy"):
            self._materialize(input)
        return self._eager.forward(self, input, *args)

    def has_uninitialized_params(self):
        return hasattr(self, "_lazy")


class _Conv2dPython(_ConvNd):
    """Conv2d's Python twin, for the lazy module (the C++ layer cannot be turned into)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


def _lazy(name, n, transposed):
    # The eager base lends its helpers (_padded, _output_padding) to the eager forward called on
    # the lazy module.
    base = _ConvTransposeNd if transposed else _ConvNd
    return type(name, (_LazyConv, base), {"_n": n, "_transposed": transposed,
                                           "__doc__": f"torch.nn.{name}: in_channels from the "
                                                      "input."})


LazyConv1d = _lazy("LazyConv1d", 1, False)
LazyConv2d = _lazy("LazyConv2d", 2, False)
LazyConv3d = _lazy("LazyConv3d", 3, False)
LazyConvTranspose1d = _lazy("LazyConvTranspose1d", 1, True)
LazyConvTranspose2d = _lazy("LazyConvTranspose2d", 2, True)
LazyConvTranspose3d = _lazy("LazyConvTranspose3d", 3, True)
