"""ember.nn.functional: torch.nn.functional's activations, linear and convolution, pooling,
dropout, normalisation, padding and resizing, attention, and losses. Each is declared once by
signature in C++ (python/src/ops_nn.cpp) with PyTorch's parameter names and defaults."""
from .. import _C
from .._C._F import *  # noqa: F401,F403
from .._C._F import _attention_math  # noqa: F401 (private: the star skips it)
from .._missing import missing

# torch.nn.functional exposes these under its own names too.
from .._C._ops import tanh, sigmoid  # noqa: E402,F401

__getattr__ = missing(__name__)
