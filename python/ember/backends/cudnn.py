"""ember.backends.cudnn: torch.backends.cudnn's switches.

`enabled` (on by default) sends convolutions and recurrent layers (RNN, LSTM, GRU) on CUDA
through cuDNN; off, they run ember's own CUDA kernels. `allow_tf32` (on by default, as in PyTorch)
lets float32 convolutions and recurrent layers use TF32 tensor cores. `benchmark` (off) picks each
convolution shape's algorithm by timing every candidate once instead of by cuDNN's heuristics;
`deterministic` (off) keeps convolutions to algorithms that give the same bits on every run.
`benchmark_limit` is kept for programs that set it: ember times every candidate."""
import sys
import types

from .. import _C
from .._missing import missing

benchmark_limit = 10


def is_available():
    """Whether ember was built with cuDNN (as torch.backends.cudnn.is_available)."""
    return _C._cuda.cudnn_built()


def version():
    """cuDNN's version as PyTorch gives it (91900 for 9.19.0), or None without cuDNN."""
    return _C._cuda.cudnn_version() if _C._cuda.cudnn_built() else None


def _switch(get, set_):
    """A module attribute read from and written to ember's core."""
    return property(lambda self: get(), lambda self, on: set_(bool(on)))


class _Module(types.ModuleType):
    enabled = _switch(_C._cuda.cudnn_enabled, _C._cuda.set_cudnn_enabled)
    allow_tf32 = _switch(_C._cuda.cudnn_allow_tf32, _C._cuda.set_cudnn_allow_tf32)
    benchmark = _switch(_C._cuda.cudnn_benchmark, _C._cuda.set_cudnn_benchmark)
    deterministic = _switch(_C._cuda.cudnn_deterministic, _C._cuda.set_cudnn_deterministic)


__getattr__ = missing(__name__)
sys.modules[__name__].__class__ = _Module
