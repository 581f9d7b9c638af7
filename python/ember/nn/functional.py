"""ember.nn.functional: torch.nn.functional's activations, linear and convolution, pooling,
dropout, normalisation, padding and resizing, attention, and losses. Each is declared once by
signature in C++ (python/src/ops_nn.cpp) with PyTorch's parameter names and defaults."""
from .. import _C
from .._C._F import *  # noqa: F401,F403
from .._C._F import _attention_math  # noqa: F401 (private: the star skips it)
from .._missing import missing

# torch.nn.functional exposes these under its own names too.
from .._C._ops import tanh, sigmoid  # noqa: E402,F401

# grid_sample's mode and padding_mode names and ATen's codes for them, as PyTorch exports them.
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def assert_int_or_pair(arg, arg_name, message):
    """Asserts that arg is an int or has two entries; message.format(arg_name) otherwise."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


__getattr__ = missing(__name__)
