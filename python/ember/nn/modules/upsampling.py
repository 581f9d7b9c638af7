"""torch.nn.modules.upsampling's names (defined in misc.py)."""
from .misc import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
