"""How tensors pickle for multiprocessing: as the handle of their memory (Note [Tensors by
descriptor] in ember/multiprocessing/queue.h is the C++ side's version of the same idea)."""
import multiprocessing.context
import multiprocessing.resource_sharer
import os
import weakref
from multiprocessing.reduction import ForkingPickler, DupFd

from .. import _C
from ..nn.parameter import Parameter

_mp = _C._multiprocessing


def _as(cls, t):
    return Parameter(t, t.requires_grad) if cls is Parameter else t


# Tensors sharing a segment (views, a module's tensors listed twice) name one descriptor: the
# process being spawned must be handed it once (Python's spawn refuses a descriptor listed twice),
# so each spawn gets one DupFd per descriptor, and the receiver duplicates what it was handed.
_dup_for_spawn = weakref.WeakKeyDictionary()


def _dup(fd):
    popen = multiprocessing.context.get_spawning_popen()
    if popen is None:
        return DupFd(fd)  # a queue: the receiver fetches a copy of its own from the sender
    handed = _dup_for_spawn.setdefault(popen, {})
    if fd not in handed:
        handed[fd] = DupFd(fd)  # registers fd with the process being spawned
    return handed[fd]


def _detach(dup):
    """A descriptor of the segment that the caller owns."""
    if isinstance(dup, multiprocessing.resource_sharer.DupFd):
        return dup.detach()  # a fresh one each time
    return os.dup(dup.detach())  # inherited by the spawned process, perhaps named twice


def _rebuild_cpu(cls, dup, nbytes, geometry):
    return _as(cls, _mp.rebuild_cpu(_detach(dup), nbytes, *geometry))


def _rebuild_cuda(cls, handle, dup, geometry):
    return _as(cls, _mp.rebuild_cuda(handle, _detach(dup), *geometry))


def reduce_tensor(t):
    """CPU: shared memory (moved there in place) by descriptor; CUDA: a CUDA IPC handle."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize a non-leaf tensor which requires_grad: "
                           "detach() it first")
    if t.is_cuda:
        handle, ref_fd, geometry = _mp.share_cuda(t)
        return _rebuild_cuda, (type(t), handle, _dup(ref_fd), geometry)
    fd, nbytes, geometry = _mp.share_cpu(t)
    return _rebuild_cpu, (type(t), _dup(fd), nbytes, geometry)





# Note [Modules across processes]: a module pickles as its structure plus its tensors, the tensors
# by handle (above), so the receiver's module computes with the sender's memory (Hogwild with the
# spawn start method, a model put on a queue). One of ember's C++ layers is rebuilt from its
# constructor's arguments (_ember_args) with its tensors put back by name; a Python subclass is
# rebuilt as DataParallel's replicas are, without calling __init__: a new instance, its __dict__,
# its registered parameters, buffers and children. Modules below a C++ layer that its constructor
# did not make (convert_sync_batchnorm's SyncBatchNorm in a ResNet) travel whole and are put back
# in their places.

def _rebuild_native(cls, args, training, replaced, tensors):
    m = cls(*args)
    for name, module in replaced:
        owner, _, leaf = name.rpartition(".")
        setattr(m.get_submodule(owner) if owner else m, leaf, module)
    for name, persistent, t in tensors:
        owner, _, leaf = name.rpartition(".")
        target = m.get_submodule(owner) if owner else m
        if persistent is None:  # a parameter
            target.register_parameter(leaf, t)
        else:
            target.register_buffer(leaf, t, persistent)
    m.train(training)
    return m


def _rebuild_python(cls, state, training, params, buffers, children):
    m = cls.__new__(cls)
    _C._nn.Module.__init__(m)
    m.__dict__.update(state)
    for name, t in params:
        m.register_parameter(name, t)
    for name, t, persistent in buffers:
        m.register_buffer(name, t, persistent)
    for name, child in children:
        m.add_module(name, child)
    m.training = training
    return m


def reduce_module(m):
    cls = type(m)
    if "__ember_native__" in cls.__dict__:
        if not hasattr(cls, "_ember_args"):
            raise TypeError(f"{cls.__name__} cannot be sent to another process")
        # Children the constructor makes (LeNet's layers) get their tensors back by dotted name;
        # children passed to it (Sequential's) travel as modules with their own tensors.
        recurse = not getattr(cls, "_ember_children_in_args", False)
        replaced = m._replaced_modules() if recurse else []

        def owner(name):
            return m.get_submodule(name.rpartition(".")[0]) if "." in name else m

        def travels_whole(name):
            return any(name.startswith(r + ".") for r in replaced)

        tensors = [(n, None, p) for n, p in m.named_parameters(recurse=recurse)
                   if not travels_whole(n)]
        tensors += [(n, n.rpartition(".")[2] not in owner(n)._non_persistent_buffers_set, b)
                    for n, b in m.named_buffers(recurse=recurse) if not travels_whole(n)]
        replaced = [(r, m.get_submodule(r)) for r in replaced]
        return _rebuild_native, (cls, m._ember_args(), m.training, replaced, tensors)
    if any("__ember_native__" in base.__dict__ for base in cls.__mro__[1:]
           if base is not _C._nn.Module):
        raise TypeError(f"{cls.__name__}, a Python subclass of one of ember's layers, cannot be "
                        "sent to another process: subclass nn.Module and hold the layer instead")
    params, buffers, children = m._registered()
    params = [(n, None if t is None else Parameter(t, t.requires_grad)) for n, t in params]
    return _rebuild_python, (type(m), dict(m.__dict__), m.training, params, buffers, children)


def _module_reduce_ex(self, protocol):
    return reduce_module(self)


def init_reductions():
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
    # Every module, Python subclasses included (pickle looks __reduce_ex__ up on the class).
    _C._nn.Module.__reduce_ex__ = _module_reduce_ex
