"""torch.nn.modules.pixelshuffle's names (defined in misc.py)."""
from .misc import PixelShuffle, PixelUnshuffle  # noqa: F401
