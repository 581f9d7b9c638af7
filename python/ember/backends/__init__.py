"""ember.backends: switches of the compute libraries (torch.backends' names)."""
from . import cuda, cudnn, mps, mkldnn, openmp  # noqa: F401
from .._missing import missing

__getattr__ = missing(__name__)
