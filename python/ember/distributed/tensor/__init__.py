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


# Specs of the marked shards, by their C++ tensor (_C._nn._tensor_id).
_specs = {}


def _mark(shard, spec):
    _specs[_C._nn._tensor_id(shard)] = spec
    _C._nn._mark_sharded(shard)


class DTensor(Parameter):
    """A parameter sharded across ranks along dim 0 (FSDP2's)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("ember's DTensor comes only from fully_shard's parameters; "
                        "distribute_tensor and DTensor.from_local are not there yet")

    @property
    def _spec(self):
        spec = _specs.get(_C._nn._tensor_id(self))
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
        if n == 1:
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


def distribute_tensor(tensor, device_mesh=None, placements=None, **kwargs):
    raise NotImplementedError("ember's DTensor comes only from fully_shard's parameters; "
                              "distribute_tensor is not there yet")


__all__ = ["DTensor", "Shard", "Replicate", "Partial", "Placement", "DeviceMesh",
           "init_device_mesh", "distribute_tensor"]
