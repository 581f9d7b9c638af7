"""How tensors pickle for multiprocessing: as the handle of their memory (Note [Tensors by
descriptor] in ember/multiprocessing/queue.h is the C++ side's version of the same idea)."""
from multiprocessing.reduction import ForkingPickler, DupFd

from .. import _C
from ..nn.parameter import Parameter

_mp = _C._multiprocessing


def _as(cls, t):
    return Parameter(t, t.requires_grad) if cls is Parameter else t


def _rebuild_cpu(cls, dup, nbytes, geometry):
    return _as(cls, _mp.rebuild_cpu(dup.detach(), nbytes, *geometry))


def _rebuild_cuda(cls, handle, dup, geometry):
    return _as(cls, _mp.rebuild_cuda(handle, dup.detach(), *geometry))


def reduce_tensor(t):
    """CPU: shared memory (moved there in place) by descriptor; CUDA: a CUDA IPC handle."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize a non-leaf tensor which requires_grad: "
                           "detach() it first")
    if t.is_cuda:
        handle, ref_fd, geometry = _mp.share_cuda(t)
        return _rebuild_cuda, (type(t), handle, DupFd(ref_fd), geometry)
    fd, nbytes, geometry = _mp.share_cpu(t)
    return _rebuild_cpu, (type(t), DupFd(fd), nbytes, geometry)


def init_reductions():
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
