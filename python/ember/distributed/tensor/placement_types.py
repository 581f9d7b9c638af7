"""torch.distributed.tensor.placement_types."""
from . import Partial, Placement, Replicate, Shard

__all__ = ["Partial", "Placement", "Replicate", "Shard"]
