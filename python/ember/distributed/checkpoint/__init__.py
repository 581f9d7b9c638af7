"""torch.distributed.checkpoint: its state_dict helpers (full state dicts of DDP, FSDP and
fully_shard-ed models, model and optimizer). Sharded save and load (DCP's directory format) are
not there yet: save and load say so, and what to do instead."""
from . import state_dict  # noqa: F401

_INSTEAD = ("ember has no sharded checkpoints (torch.distributed.checkpoint.{0}) yet: take a full "
            "state dict with torch.distributed.checkpoint.state_dict.get_model_state_dict(model, "
            "options=StateDictOptions(full_state_dict=True)) and torch.save it from rank 0")


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False):
    raise NotImplementedError(_INSTEAD.format("save"))


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    raise NotImplementedError(_INSTEAD.format("load"))


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None):
    raise NotImplementedError(_INSTEAD.format("async_save"))


class FileSystemWriter:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_INSTEAD.format("FileSystemWriter"))


class FileSystemReader:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_INSTEAD.format("FileSystemReader"))
