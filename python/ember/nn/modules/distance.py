"""torch.nn.modules.distance's names (defined in misc.py)."""
from .misc import CosineSimilarity, PairwiseDistance  # noqa: F401
