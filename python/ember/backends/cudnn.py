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

    @property
    def benchmark(self):
        return _C._cuda.cudnn_benchmark()

    @benchmark.setter
    def benchmark(self, on):
        _C._cuda.set_cudnn_benchmark(bool(on))

    @property
    def deterministic(self):
        return _C._cuda.cudnn_deterministic()

    @deterministic.setter
    def deterministic(self, on):
        _C._cuda.set_cudnn_deterministic(bool(on))


__getattr__ = missing(__name__)
sys.modules[__name__].__class__ = _Module
