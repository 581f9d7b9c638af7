"""torch.distributed.checkpoint.load: fills a state dict in place from a checkpoint. Each tensor
(or DTensor block) takes what overlaps it from the saved chunks, however many ranks saved them;
other values are replaced; a Stateful value gets load_state_dict of what was read."""
import io
from collections.abc import Mapping

from ... import _C
from . import default_planner as _plan
from ._dist_wrapper import _DistWrapper
from ._traverse import flatten_state_dict
from .metadata import BytesStorageMetadata, MetadataIndex
from .state_dict_saver import _states, _storage, _use_dist
from .stateful import Stateful


def _set_existing(root, path, value):
    """Puts value at path in root, matching each key by its string (the flattened names are
    strings, an optimizer's state keys ints)."""
    node = root
    for i, part in enumerate(path):
        if isinstance(node, Mapping):
            key = part if part in node else next((k for k in node if str(k) == part), part)
        else:
            key = int(part)
        if i == len(path) - 1:
            node[key] = value
        else:
            node = node[key]


def _load_bytes(data):
    from ...serialization import load
    return load(io.BytesIO(data), weights_only=False)


def _load_tensor(data):
    from ...serialization import load
    return load(io.BytesIO(data), map_location="cpu", weights_only=True)


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Loads the checkpoint checkpoint_id into state_dict, in place: its tensors keep their
    storage (a DTensor its local block), so the module and optimizer that own them see the
    values. Every key of state_dict must be in the checkpoint (DefaultLoadPlanner(
    allow_partial_load=True) skips those that are not)."""
    reader = _storage(checkpoint_id, storage_reader, "reader")
    planner = planner or _plan.DefaultLoadPlanner()
    wrapper = _DistWrapper(process_group, _use_dist(no_dist))
    metadata = wrapper.from_coordinator("read metadata", reader.read_metadata)
    states = _states(state_dict)

    def read():
        flat, mappings = flatten_state_dict(states)
        for name, dest in flat.items():
            entry = metadata.state_dict_metadata.get(name)
            if entry is None:
                if planner.allow_partial_load:
                    continue
                raise RuntimeError(f"Missing key in checkpoint state_dict: {name}.")
            if isinstance(entry, BytesStorageMetadata):
                data = reader._read(metadata.storage_data[MetadataIndex(name)])
                _set_existing(states, mappings[name], _load_bytes(data))
            elif isinstance(dest, _C.Tensor):
                _plan.fill_tensor(name, dest, entry, lambda i, e=entry, n=name: _load_tensor(
                    reader._read(metadata.storage_data[MetadataIndex(n, e.chunks[i].offsets)])))
            else:
                raise RuntimeError(f"{name} is a tensor in the checkpoint but "
                                   f"{type(dest).__name__} in the state dict to load: give a "
                                   "tensor of its size to load into")

    wrapper.all_gather("read", read)
    for key, value in state_dict.items():
        if isinstance(value, Stateful) and not isinstance(value, dict):
            value.load_state_dict(states[key])
        elif states[key] is not value:
            state_dict[key] = states[key]


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """PyTorch 1.13-2.1's name for load."""
    return load(state_dict, storage_reader=storage_reader, process_group=process_group,
                no_dist=no_dist, planner=planner)
