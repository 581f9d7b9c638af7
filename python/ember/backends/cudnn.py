"""ember.backends.cudnn: torch.backends.cudnn's switches. Programs set them before training;
ember keeps them (its GPU convolutions pick no algorithm by timing, so `benchmark` changes
nothing) and reports whether cuDNN can be used."""
from .. import _C
from .._missing import missing

enabled = True
benchmark = False
deterministic = False
benchmark_limit = 10
allow_tf32 = True


def is_available():
    """Whether ember was built with CUDA and a GPU is there."""
    return _C._cuda.is_available()


def version():
    """None: ember does not report cuDNN's version."""
    return None


__getattr__ = missing(__name__)
