"""torch.nn.modules.fold's names (defined in misc.py)."""
from .misc import Fold, Unfold  # noqa: F401
