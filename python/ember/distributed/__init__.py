"""ember.distributed: process groups over Gloo (CPU), NCCL (GPU) and MPI, their collectives, and
the rendezvous by env:// (as `ember launch` and torchrun set it), tcp:// or file://."""
from .. import _C

_d = _C._distributed
ReduceOp, Work, ProcessGroup = _d.ReduceOp, _d.Work, _d.ProcessGroup
init_process_group, destroy_process_group, is_initialized = (
    _d.init_process_group, _d.destroy_process_group, _d.is_initialized)
get_rank, get_world_size, new_group = _d.get_rank, _d.get_world_size, _d.new_group
get_backend = _d.get_backend
all_reduce, broadcast, reduce, all_gather, gather, scatter = (
    _d.all_reduce, _d.broadcast, _d.reduce, _d.all_gather, _d.gather, _d.scatter)
reduce_scatter, all_to_all_single, barrier = _d.reduce_scatter, _d.all_to_all_single, _d.barrier
all_gather_into_tensor, reduce_scatter_tensor = _d.all_gather_into_tensor, _d.reduce_scatter_tensor
# PyTorch 1.13's names for the flat forms (FairScale and FSDP's first versions call them).
_all_gather_base, _reduce_scatter_base = all_gather_into_tensor, reduce_scatter_tensor
send, recv, isend, irecv = _d.send, _d.recv, _d.isend, _d.irecv


def is_available():
    return True


def available_backends():
    """The backends this build has, e.g. ['gloo', 'mpi']."""
    return [b.strip() for b in _d.available_backends().split(",") if b.strip()]


def is_gloo_available():
    return "gloo" in available_backends()


def is_mpi_available():
    return "mpi" in available_backends()


def is_nccl_available():
    return "nccl" in available_backends()


def get_default_backend_for_device(device):
    """The backend PyTorch picks for a device type: NCCL for CUDA, Gloo for the CPU."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    kind = kind.partition(":")[0]
    if kind == "cuda":
        return "nccl"
    if kind == "cpu":
        return "gloo"
    raise ValueError(f"Unknown device type {kind!r}: expected 'cpu' or 'cuda'")


from ._object_collectives import (all_gather_object, gather_object,  # noqa: E402
                                  broadcast_object_list, scatter_object_list)
