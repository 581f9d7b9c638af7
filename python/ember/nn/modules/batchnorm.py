"""torch.nn.modules.batchnorm's names (defined in normalization.py)."""
from .normalization import BatchNorm1d, BatchNorm2d, SyncBatchNorm  # noqa: F401
