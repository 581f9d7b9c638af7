"""torch.distributed.fsdp: FullyShardedDataParallel, its options and state dict types."""
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision,
                  OptimStateDictConfig, ShardedOptimStateDictConfig, ShardedStateDictConfig,
                  ShardingStrategy, StateDictConfig, StateDictSettings, StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel
from ._fully_shard import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,
                           fully_shard)

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "MixedPrecision",
           "CPUOffload", "StateDictType", "FullStateDictConfig", "LocalStateDictConfig",
           "ShardedStateDictConfig", "StateDictSettings", "OptimStateDictConfig",
           "FullOptimStateDictConfig", "LocalOptimStateDictConfig", "ShardedOptimStateDictConfig",
           "StateDictConfig", "fully_shard", "FSDPModule", "MixedPrecisionPolicy",
           "OffloadPolicy", "CPUOffloadPolicy"]
