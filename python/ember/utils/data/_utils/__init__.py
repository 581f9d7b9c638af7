"""torch.utils.data._utils' modules that programs import: collate (default_collate and
default_convert) and fetch (how a batch is read from a map-style or an iterable dataset)."""
from . import collate, fetch  # noqa: F401
