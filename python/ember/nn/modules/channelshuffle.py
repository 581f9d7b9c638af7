"""torch.nn.modules.channelshuffle's name (defined in misc.py)."""
from .misc import ChannelShuffle  # noqa: F401
