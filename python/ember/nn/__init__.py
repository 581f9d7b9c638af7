"""ember.nn: modules and layers (torch.nn's names). Subclass Module, assign layers and
Parameters as attributes in __init__, and define forward: the C++ core sees the result as one of
its own modules (DataParallel replicates it, optimizers and state dicts see its parameters).
The layers are ember's C++ ones where they exist (Linear, Conv2d, pooling, batch norm, ...) and
Python modules over ember.nn.functional otherwise; torch.nn.modules' paths hold them too."""
from .. import _C
from .parameter import Parameter, UninitializedParameter, Buffer
from . import functional, init, parallel, utils
from . import modules
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential
from .._missing import missing

DataParallel = parallel.DataParallel
__getattr__ = missing(__name__)
