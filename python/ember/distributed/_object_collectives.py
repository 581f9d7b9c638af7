"""PyTorch's collectives of picklable objects (all_gather_object, gather_object,
broadcast_object_list, scatter_object_list): each object pickled into a byte tensor, the sizes
exchanged first so every rank can hold the largest, then one tensor collective."""
import io
import pickle

from .. import _C
from .._compat.factories import frombuffer

_d = _C._distributed


def _device(group):
    # NCCL moves only device memory; PyTorch uses the current CUDA device for it as well.
    if _d.get_backend(group) == "nccl":
        return _C.device("cuda", _C._cuda.current_device())
    return _C.device("cpu")


def _to_bytes(obj, device):
    data = io.BytesIO()
    pickle.Pickler(data).dump(obj)
    t = frombuffer(bytearray(data.getvalue()), dtype=_C.uint8)
    return t.to(device), _C.tensor([t.numel()], dtype=_C.int64, device=device)


def _from_bytes(t, size):
    return pickle.loads(bytes(t[:size].cpu().numpy()))


def _padded(t, n):
    out = _C._ops.zeros((n,), dtype=_C.uint8, device=t.device)
    out[:t.numel()] = t
    return out


def _gathered_sizes(size, group, device):
    n = _d.get_world_size(group)
    sizes = [_C._ops.zeros((1,), dtype=_C.int64, device=device) for _ in range(n)]
    _d.all_gather(sizes, size, group=group)
    return [int(s.item()) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """Fills object_list (one slot per rank) with every rank's obj."""
    n = _d.get_world_size(group)
    if len(object_list) != n:
        raise ValueError(f"all_gather_object: object_list must have {n} elements (one per rank), "
                         f"got {len(object_list)}")
    device = _device(group)
    data, size = _to_bytes(obj, device)
    sizes = _gathered_sizes(size, group, device)
    longest = max(sizes)
    outs = [_C._ops.empty((longest,), dtype=_C.uint8, device=device) for _ in range(n)]
    _d.all_gather(outs, _padded(data, longest), group=group)
    for i, (t, s) in enumerate(zip(outs, sizes)):
        object_list[i] = _from_bytes(t, s)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On dst, fills object_gather_list with every rank's obj; other ranks pass None."""
    n, rank = _d.get_world_size(group), _d.get_rank(group)
    if rank == dst and (object_gather_list is None or len(object_gather_list) != n):
        raise ValueError(f"gather_object: rank {dst} must pass object_gather_list with {n} "
                         "elements (one per rank)")
    device = _device(group)
    data, size = _to_bytes(obj, device)
    sizes = _gathered_sizes(size, group, device)
    longest = max(sizes)
    outs = [_C._ops.empty((longest,), dtype=_C.uint8, device=device) for _ in range(n)] \
        if rank == dst else None
    _d.gather(_padded(data, longest), outs, dst=dst, group=group)
    if rank == dst:
        for i, (t, s) in enumerate(zip(outs, sizes)):
            object_gather_list[i] = _from_bytes(t, s)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Replaces object_list's elements on every rank with src's."""
    device = _C.device(device) if device is not None else _device(group)
    rank = _d.get_rank(group)
    if rank == src:
        pieces = [_to_bytes(o, device) for o in object_list]
        sizes = _C._ops.cat([s for _, s in pieces]) if pieces else \
            _C._ops.zeros((0,), dtype=_C.int64, device=device)
    else:
        sizes = _C._ops.zeros((len(object_list),), dtype=_C.int64, device=device)
    _d.broadcast(sizes, src, group=group)
    total = int(sizes.sum().item()) if len(object_list) else 0
    if rank == src:
        flat = _C._ops.cat([t for t, _ in pieces]) if pieces else \
            _C._ops.zeros((0,), dtype=_C.uint8, device=device)
    else:
        flat = _C._ops.empty((total,), dtype=_C.uint8, device=device)
    _d.broadcast(flat, src, group=group)
    start = 0
    for i, s in enumerate(sizes.tolist()):
        object_list[i] = _from_bytes(flat[start:start + s], s)
        start += s


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    """Sets scatter_object_output_list[0] on rank r to src's scatter_object_input_list[r]."""
    n, rank = _d.get_world_size(group), _d.get_rank(group)
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a list with at "
                         "least one element")
    if rank == src and (scatter_object_input_list is None or
                        len(scatter_object_input_list) != n):
        raise ValueError(f"scatter_object_list: rank {src} must pass scatter_object_input_list "
                         f"with {n} elements (one per rank)")
    objects = list(scatter_object_input_list) if rank == src else [None] * n
    broadcast_object_list(objects, src=src, group=group)
    scatter_object_output_list[0] = objects[rank]
