"""torch.distributed._composable.fsdp: FSDP2 where PyTorch 2.4 and 2.5 kept it (2.6 moved it to
torch.distributed.fsdp); the same objects."""
from ...fsdp._fully_shard import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy,
                                  OffloadPolicy, fully_shard)

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]
