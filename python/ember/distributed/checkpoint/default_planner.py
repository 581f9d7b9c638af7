"""What each rank saves and reads (PyTorch's default planners). A tensor is saved as the chunks
its ranks hold: a DTensor's local block at its offsets, a plain tensor whole; the same chunk on
several ranks (replicas) is written once, by the rank with the fewest bytes so far. Loading, each
rank copies from every saved chunk that overlaps the block it holds now, so a checkpoint saved at
N ranks loads at M."""
from dataclasses import dataclass
from typing import Any

from ... import _C
from ..._size import Size
from ...autograd import no_grad
from ..tensor import DTensor
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)


class DefaultSavePlanner:
    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False,
                 enable_plan_caching=False):
        self.flatten_state_dict = flatten_state_dict
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank


class DefaultLoadPlanner:
    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 allow_partial_load=False):
        self.flatten_state_dict = flatten_state_dict
        self.allow_partial_load = allow_partial_load


@dataclass
class _Item:
    """One thing a rank can write: a tensor chunk (offsets, sizes of a whole of size `whole`)
    or, with offsets None, a value saved as bytes."""
    index: MetadataIndex
    path: tuple
    sizes: tuple = ()
    whole: tuple = ()
    dtype: Any = None
    requires_grad: bool = False
    nbytes: int = 0


def _block(value):
    """(local tensor, its offsets in the whole, the whole's size) of a tensor value."""
    if isinstance(value, DTensor):
        spec = value._spec
        local = value.to_local()
        return local, spec.offsets(local), tuple(spec.shape)
    return value, (0,) * value.dim(), tuple(value.shape)


def local_items(flat, mappings):
    """[(_Item, data)] for this rank's flattened state dict; data is the tensor chunk or value."""
    out = []
    for name, value in flat.items():
        if isinstance(value, _C.Tensor):
            local, offsets, whole = _block(value)
            if local.numel() == 0 and any(whole):
                continue  # a rank past the last rows holds nothing of this tensor
            item = _Item(MetadataIndex(name, offsets), mappings[name], tuple(local.shape),
                         whole, local.dtype, bool(value.requires_grad),
                         local.numel() * local.element_size())
            out.append((item, local.detach().cpu().contiguous()))
        else:
            out.append((_Item(MetadataIndex(name), mappings[name]), value))
    return out


def assign(plans, to_lowest_rank=False):
    """For each rank, the indices it writes: each item once, to the rank holding it that has the
    fewest bytes so far (or to the lowest such rank)."""
    holders, first = {}, {}
    for rank, plan in enumerate(plans):
        for item in plan:
            holders.setdefault(item.index, []).append(rank)
            first.setdefault(item.index, item)
    load = [0] * len(plans)
    mine = [set() for _ in plans]
    for index, ranks in holders.items():
        rank = ranks[0] if to_lowest_rank else min(ranks, key=lambda r: (load[r], r))
        load[rank] += first[index].nbytes
        mine[rank].add(index)
    return mine


def build_metadata(plans, storage_data):
    """The Metadata of a save: every value's size and saved chunks, every path, every item."""
    entries, paths = {}, {}
    for plan in plans:
        for item in plan:
            name = item.index.fqn
            paths[name] = item.path
            if item.index.offset is None:
                entries[name] = BytesStorageMetadata()
                continue
            entry = entries.get(name)
            if entry is None:
                entry = entries[name] = TensorStorageMetadata(
                    TensorProperties(dtype=item.dtype, requires_grad=item.requires_grad),
                    Size(item.whole), [])
            chunk = ChunkStorageMetadata(Size(item.index.offset), Size(item.sizes))
            if chunk not in entry.chunks:
                entry.chunks.append(chunk)
    return Metadata(state_dict_metadata=entries, planner_data=paths, storage_data=storage_data)


def _overlap(a_off, a_size, b_off, b_size):
    """Per dimension (start, length) of the common part of two blocks, or None."""
    out = []
    for ao, asz, bo, bsz in zip(a_off, a_size, b_off, b_size):
        lo, hi = max(ao, bo), min(ao + asz, bo + bsz)
        if hi <= lo:
            return None
        out.append((lo, hi - lo))
    return out


def _narrow(t, starts, region):
    for d, ((lo, n), s) in enumerate(zip(region, starts)):
        t = t.narrow(d, lo - s, n)
    return t


def fill_tensor(name, dest, entry, read_chunk):
    """Copies into dest (a tensor or DTensor) its block of the saved tensor `entry`;
    read_chunk(i) returns the i-th saved chunk."""
    local, offsets, whole = _block(dest)
    if tuple(entry.size) != whole:
        raise RuntimeError(f"Size mismatch between saved {Size(entry.size)} and current: "
                           f"{Size(whole)} for {name}")
    with no_grad():
        for i, chunk in enumerate(entry.chunks):
            region = _overlap(offsets, local.shape, chunk.offsets, chunk.sizes)
            if region is None and local.dim() > 0:
                continue
            saved = read_chunk(i)
            if tuple(saved.shape) != tuple(chunk.sizes):
                raise RuntimeError(f"checkpoint chunk {i} of {name} holds a tensor of size "
                                   f"{list(saved.shape)} where its metadata says "
                                   f"{list(chunk.sizes)}")
            if local.dim() == 0:
                local.copy_(saved)
            else:
                _narrow(local, offsets, region).copy_(_narrow(saved, chunk.offsets, region))
