"""torch.distributed.checkpoint: so far its state_dict helpers (full state dicts of DDP, FSDP and
fully_shard-ed models). Sharded save/load (the DCP directory format) is not there yet."""
from . import state_dict  # noqa: F401
