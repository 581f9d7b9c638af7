"""ember.backends.cudnn: torch.backends.cudnn's switches.

`enabled` (on by default) sends recurrent layers (RNN, LSTM, GRU) on CUDA through cuDNN's RNN
API; off, they run ember's own CUDA kernels. `allow_tf32` (on by default, as in PyTorch) lets
float32 recurrent layers use TF32 tensor cores. ember's GPU convolutions are its own and pick no
algorithm by timing, so `benchmark` and `deterministic` are kept for programs that set them and
change nothing."""
import sys
import types

from .. import _C
from .._missing import missing

benchmark = False
deterministic = False
benchmark_limit = 10


def is_available():
    """Whether ember was built with cuDNN (as torch.backends.cudnn.is_available)."""
    return _C._cuda.cudnn_built()


def version():
    """cuDNN's version as PyTorch gives it (91900 for 9.19.0), or None without cuDNN."""
    return _C._cuda.cudnn_version() if _C._cuda.cudnn_built() else None


class _Module(types.ModuleType):
    @property
    def enabled(self):
        return _C._cuda.cudnn_enabled()

    @enabled.setter
    def enabled(self, on):
        _C._cuda.set_cudnn_enabled(bool(on))

    @property
    def allow_tf32(self):
        return _C._cuda.cudnn_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, on):
        _C._cuda.set_cudnn_allow_tf32(bool(on))


__getattr__ = missing(__name__)
sys.modules[__name__].__class__ = _Module
