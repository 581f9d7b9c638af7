"""torch.nn.modules.batchnorm's names (defined in normalization.py)."""
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm,  # noqa: F401
                            LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)
