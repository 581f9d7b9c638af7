"""torch.distributed.tensor, as far as FSDP2 needs it: the DTensor class its sharded parameters
are instances of, and the placements. ember's DTensor is the local shard itself (a Parameter):
shape and numel are the local ones, where PyTorch's report the global ones; to_local(),
full_tensor(), placements and device_mesh are PyTorch's. Note [Sharded parameters] in
python/src/nn.cpp says how a parameter comes back as one."""
from dataclasses import dataclass

from ... import _C
from ...nn.parameter import Parameter
from ..device_mesh import DeviceMesh, init_device_mesh

_d = _C._distributed


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self):
        return False


@dataclass(frozen=True)
class Shard(Placement):
    dim: int = 0

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __repr__(self):
        return f"Shard(dim={self.dim})"


@dataclass(frozen=True)
class Replicate(Placement):
    def is_replicate(self):
        return True

    def __repr__(self):
        return "Replicate()"


@dataclass(frozen=True)
class Partial(Placement):
    reduce_op: str = "sum"

    def is_partial(self):
        return True

    def __repr__(self):
        return f"Partial({self.reduce_op})"


@dataclass
class _Spec:
    """How a local shard stands for its whole: the mesh, the placements, the global shape, the
    rows each rank holds (the last ranks' fewer), the group that shards it, and reduce(tensor,
    "sum" | "max"), which combines a norm's pieces over that group (clip_grad_norm_)."""
    mesh: DeviceMesh
    placements: tuple
    shape: tuple
    chunk: int
    group: object
    reduce: object

    def is_sharded(self):
        return any(p.is_shard() for p in self.placements)

    def offsets(self, local):
        """Where this rank's rows start in the whole: Shard(0) blocks of `chunk` rows, the
        shard group's rank r holding the r-th."""
        if not self.is_sharded() or not self.shape:
            return (0,) * len(self.shape)
        return (_d.get_rank(self.group) * self.chunk,) + (0,) * (len(self.shape) - 1)


# Specs of the marked shards, by their C++ tensor (_C._nn._tensor_id).
_specs = {}


def _mark(shard, spec):
    _specs[_C._nn._tensor_id(shard)] = spec
    _C._nn._mark_sharded(shard)


class DTensor(Parameter):
    """A parameter sharded across ranks along dim 0 (FSDP2's)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("a DTensor is made by fully_shard, distribute_tensor or "
                        "DTensor.from_local, not by its constructor")

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """A DTensor over this rank's local_tensor: Shard(0) or Replicate() on a 1-D mesh,
        (Replicate(), Shard(0)) on a 2-D one. Without shape, Shard(0) blocks are taken as even
        (PyTorch's rule)."""
        mesh = device_mesh or init_device_mesh("cpu", (_d.get_world_size(),))
        placements = tuple(placements or (Replicate(),) * mesh.ndim)
        if len(placements) != mesh.ndim:
            raise ValueError(f"DTensor.from_local: {len(placements)} placements for a "
                             f"{mesh.ndim}-D mesh")
        allowed = {1: [(Shard(0),), (Replicate(),)], 2: [(Replicate(), Shard(0)),
                                                       (Replicate(), Replicate())]}
        if placements not in allowed[mesh.ndim]:
            raise NotImplementedError(f"ember's DTensor shards on dim 0 of the mesh's last "
                                      f"dimension only; got placements {placements}")
        sharded = placements[-1].is_shard()
        group = mesh.get_group(mesh.ndim - 1)
        n = mesh.shape[-1]
        local_shape = tuple(local_tensor.shape)
        if shape is None:
            shape = ((local_shape[0] * n,) + local_shape[1:]) if sharded else local_shape
        shape = tuple(shape)
        rows = shape[0] if shape else 1
        chunk = (rows + n - 1) // n if sharded else rows

        def reduce(t, op):
            _d.all_reduce(t, op=_d.ReduceOp.MAX if op == "max" else _d.ReduceOp.SUM,
                          group=group)

        return DTensor._over(local_tensor, _Spec(mesh, placements, shape, chunk, group, reduce))

    @staticmethod
    def _over(local, spec):
        """A DTensor sharing local's memory, laid out as spec says."""
        out = DTensor.__new__(DTensor)
        _C.Tensor.__init__(out, local.detach())
        out.requires_grad_(local.requires_grad)
        out.__dict__["_local_spec"] = spec
        return out

    @property
    def _spec(self):
        spec = self.__dict__.get("_local_spec") or _specs.get(_C._nn._tensor_id(self))
        if spec is None:
            raise RuntimeError("this DTensor's module is gone")
        return spec

    @property
    def placements(self):
        return self._spec.placements

    @property
    def device_mesh(self):
        return self._spec.mesh

    @property
    def _local_tensor(self):
        return self.to_local()

    def to_local(self, *, grad_placements=None):
        """This rank's rows, as a plain tensor sharing the shard's memory."""
        return _C.Tensor.view(self, tuple(self.shape))

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor, gathered from the ranks that shard it."""
        spec = self._spec
        local = self.detach()
        n = len(spec.mesh._ranks[0]) if spec.mesh.ndim == 2 else spec.mesh.size()
        if n == 1 or not spec.is_sharded():
            return local.clone()
        rows = tuple(spec.shape)[0] if spec.shape else 1
        block = _C._ops.zeros((spec.chunk,) + tuple(spec.shape[1:]), dtype=local.dtype)
        if local.numel():
            block[:local.shape[0] if local.dim() else 1] = local
        gathered = _C._ops.empty((n * spec.chunk,) + tuple(spec.shape[1:]), dtype=local.dtype)
        _d.all_gather_into_tensor(gathered, block, group=spec.group)
        return gathered[:rows].reshape(spec.shape)

    def __repr__(self):
        return (f"DTensor(local_tensor={_C.Tensor.__repr__(self)}, "
                f"device_mesh={self._spec.mesh}, placements={self._spec.placements})")


_C._register("DTensor", DTensor)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Rank src_data_rank's tensor, shared out: each rank keeps its Shard(0) block of rows (or
    the whole, for Replicate())."""
    mesh = device_mesh or init_device_mesh("cpu", (_d.get_world_size(),))
    placements = tuple(placements or (Replicate(),) * mesh.ndim)
    whole = tensor.detach().contiguous().clone()
    if src_data_rank is not None and _d.get_world_size() > 1:
        _d.broadcast(whole, src_data_rank)
    local = whole
    if placements[-1].is_shard():
        n, rows = mesh.shape[-1], (whole.shape[0] if whole.dim() else 1)
        chunk = (rows + n - 1) // n
        start = min(_d.get_rank(mesh.get_group(mesh.ndim - 1)) * chunk, rows)
        local = whole[start:min(start + chunk, rows)].clone()
    out = DTensor.from_local(local, mesh, placements, shape=tuple(whole.shape))
    out.requires_grad_(tensor.requires_grad)
    return out


__all__ = ["DTensor", "Shard", "Replicate", "Partial", "Placement", "DeviceMesh",
           "init_device_mesh", "distribute_tensor"]
