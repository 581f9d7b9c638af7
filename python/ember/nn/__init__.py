"""ember.nn: modules and layers (torch.nn's names). Subclass Module, assign layers and
Parameters as attributes in __init__, and define forward: the C++ core sees the result as one of
its own modules (DataParallel replicates it, optimizers and state dicts see its parameters).
The layers are ember's C++ ones where they exist (Linear, Conv2d, pooling, batch norm, ...) and
Python modules over ember.nn.functional otherwise; torch.nn.modules' paths hold them too."""
from .. import _C
from .parameter import Parameter, UninitializedParameter, UninitializedBuffer, Buffer
from . import attention, functional, init, parallel, utils
from . import modules
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential
from . import common_types, grad  # noqa: F401
from .._missing import missing

DataParallel = parallel.DataParallel


def factory_kwargs(kwargs):
    """The device, dtype and memory_format of a module's **kwargs as one dict for a factory
    (ember.empty(10, **factory_kwargs(kwargs))); a 'factory_kwargs' entry gives them under a
    name that does not clash with the module's own arguments. TypeError for any other key."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


__getattr__ = missing(__name__)
