"""ember.accelerator: the current accelerator, device-agnostic (torch.accelerator, PyTorch 2.6's
names). ember's accelerator is CUDA; with no GPU there is none and is_available() is False."""
from . import _C
from . import cuda as _cuda
from ._missing import missing

__all__ = ["current_accelerator", "current_device_index", "current_device_idx", "device_count",
           "is_available", "set_device_index", "set_device_idx", "synchronize", "device_index"]


def is_available():
    """Whether a GPU is there."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """ember.device('cuda') when a GPU is there, else None."""
    return _C.device("cuda") if _cuda.is_available() else None


def device_count():
    """The number of GPUs (0 without)."""
    return _cuda.device_count()


def current_device_index():
    """The current GPU's index."""
    return _cuda.current_device()


def set_device_index(device):
    """Makes a GPU the current one."""
    if isinstance(device, _C.device):
        device = device.index or 0
    _cuda.set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None):
    """Waits for the GPU's work."""
    _cuda.synchronize()


device_index = _cuda.device
__getattr__ = missing(__name__)
