"""torch.nn.utils.init: skip_init."""
import inspect
import re

from ... import _C

__all__ = ["skip_init"]


def _takes_device(module_cls):
    try:
        return 'device' in inspect.signature(module_cls).parameters
    except (TypeError, ValueError):
        # One of ember's C++ layers: pybind11 gives no signature, its docstring lists the
        # arguments.
        return re.search(r"\bdevice\s*:", module_cls.__init__.__doc__ or "") is not None


def skip_init(module_cls, *args, **kwargs):
    """An instance of module_cls(*args, **kwargs) whose parameters and buffers are to be set by
    the caller. The class must take a `device` argument, as in PyTorch. PyTorch builds the
    module on the meta device and allocates it uninitialised; ember has no meta device, so the
    module is built on its device and its initialisation runs (the values are as arbitrary as
    PyTorch's uninitialised memory, only not free)."""
    if not issubclass(module_cls, _C._nn.Module):
        raise RuntimeError('Expected a Module; got {}'.format(module_cls))
    if not _takes_device(module_cls):
        raise RuntimeError('Module must support a \'device\' arg to skip initialization')
    kwargs['device'] = kwargs.pop('device', 'cpu')
    return module_cls(*args, **kwargs)
