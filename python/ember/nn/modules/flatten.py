"""torch.nn.modules.flatten's names (defined in misc.py)."""
from .misc import Flatten, Unflatten  # noqa: F401
