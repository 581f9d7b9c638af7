"""torch.nn.modules.instancenorm's names (defined in normalization.py)."""
from .normalization import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                            LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
