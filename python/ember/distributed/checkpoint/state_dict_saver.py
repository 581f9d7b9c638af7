"""torch.distributed.checkpoint.save: every rank writes its part of a state dict into one
directory; the coordinator writes the metadata last (Note [Whole checkpoints] in filesystem.py)."""
import concurrent.futures
import threading

from ... import _C
from . import default_planner as _plan
from ._dist_wrapper import _DistWrapper
from ._traverse import flatten_state_dict
from .filesystem import FileSystemReader, FileSystemWriter
from .stateful import Stateful

_d = _C._distributed


def _storage(checkpoint_id, storage, kind):
    if storage is None:
        if checkpoint_id is None:
            raise RuntimeError(f"torch.distributed.checkpoint needs a checkpoint_id (a "
                               f"directory) or a storage_{kind}")
        return (FileSystemWriter if kind == "writer" else FileSystemReader)(checkpoint_id)
    if checkpoint_id is not None:
        storage.reset(checkpoint_id)
    return storage


def _use_dist(no_dist):
    return not no_dist and _d.is_initialized()


def _states(state_dict):
    """The state dict with each Stateful value (a module, an optimizer) as its state_dict()."""
    return {k: (v.state_dict() if isinstance(v, Stateful) and not isinstance(v, dict) else v)
            for k, v in state_dict.items()}


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False):
    """Saves state_dict (nested dicts and lists of tensors, DTensors and other values) as this
    rank's part of the checkpoint checkpoint_id; every rank of process_group calls it. Returns
    the Metadata written."""
    writer = _storage(checkpoint_id, storage_writer, "writer")
    planner = planner or _plan.DefaultSavePlanner()
    wrapper = _DistWrapper(process_group, _use_dist(no_dist))
    flat, mappings = flatten_state_dict(_states(state_dict))
    local = _plan.local_items(flat, mappings)
    plans = wrapper.all_gather("plan", lambda: [item for item, _ in local])
    mine = _plan.assign(plans, planner.dedup_save_to_lowest_rank)[wrapper.rank]
    taken = wrapper.from_coordinator("prepare", writer._prepare)

    def write():
        name = writer._file_name(wrapper.rank, taken)
        return writer._write(name, [(item.index, data) for item, data in local
                                    if item.index in mine])

    def commit(results):
        storage_data = {}
        for written in results:
            storage_data.update(written)
        metadata = _plan.build_metadata(plans, storage_data)
        writer._commit(metadata)
        return metadata

    return wrapper.to_coordinator("write", write, commit)


def _staged(value):
    """A copy of value whose tensors are detached CPU copies (what async_save writes)."""
    if isinstance(value, dict):
        return type(value)((k, _staged(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_staged(v) for v in value]
    if isinstance(value, _C.Tensor):
        from ..tensor import DTensor
        if isinstance(value, DTensor):
            spec = value._spec
            copy = DTensor.from_local(value.to_local().detach().cpu().clone(), spec.mesh,
                                      spec.placements, shape=spec.shape)
            return copy
        return value.detach().cpu().clone()
    return value


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None):
    """Copies state_dict to the CPU now and saves the copy on another thread; returns a
    concurrent.futures.Future of the Metadata, as PyTorch does. The save runs collectives on
    process_group: give it a group of its own when training runs collectives meanwhile."""
    staged = _staged(_states(state_dict))
    future = concurrent.futures.Future()

    def run():
        try:
            future.set_result(save(staged, checkpoint_id=checkpoint_id,
                                   storage_writer=storage_writer, planner=planner,
                                   process_group=process_group))
        except BaseException as err:  # noqa: BLE001 (handed to whoever waits)
            future.set_exception(err)

    threading.Thread(target=run, name="ember-async-save", daemon=True).start()
    return future


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """PyTorch 1.13-2.1's name for save."""
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                no_dist=no_dist, planner=planner)
