"""FSDP2's fully_shard (torch.distributed.fsdp.fully_shard, PyTorch 2.6): shards a module in place.
Each parameter is split along dim 0 across the ranks and its shard stays in the parameter's own
slot, so parameters() and state_dict() keep their names; the module's class becomes
FSDP<Class>, which gathers the parameters around its forward (ember's _ShardedParams, the same
C++ machinery as FullyShardedDataParallel's, one flat buffer per parameter). Apply it to the
layers first, then to the whole model. PyTorch's parameters become DTensors; ember's are the
local shards as plain tensors (torch.nn.utils.clip_grad_norm_ still clips by the whole norm)."""
from dataclasses import dataclass
from typing import Any, Optional

from ... import _C, Tensor
from ...nn.utils import clip_grad as _clip_grad
from ..device_mesh import init_device_mesh
from ..tensor import DTensor, Replicate, Shard, _mark, _Spec, _specs

_d = _C._distributed


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: Optional[Any] = None
    reduce_dtype: Optional[Any] = None
    output_dtype: Optional[Any] = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    pass


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


def _cast(value, dtype):
    """value's floating tensors (in tuples, lists and dicts too) as dtype (MixedPrecision's
    cast of forward inputs)."""
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (tuple, list)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


class FSDPModule:
    """What fully_shard adds to a module's class."""
    __slots__ = ()  # adds no storage: a module's class can become FSDP<Class> in place

    def state_dict(self, *args, **kwargs):
        """PyTorch's FSDP2 state dict: each sharded parameter as a DTensor of this rank's
        rows (torch.distributed.checkpoint saves and reloads them at any world size)."""
        state = super().state_dict(*args, **kwargs)
        prefix = kwargs.get("prefix", args[1] if len(args) > 1 else "")
        specs = {prefix + n: p._spec for n, p in self.named_parameters() if isinstance(p, DTensor)}
        for name, t in state.items():
            if name in specs:
                state[name] = DTensor._over(t, specs[name])
        return state

    def reshard(self):
        """Parameters are resharded after every forward and backward already."""

    def unshard(self, async_op=False):
        """Gathering happens in the forward itself (no explicit prefetch yet)."""
        return None

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward keeps full gradients instead of reducing them (accumulation)."""
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule):
                m._fsdp_params.set_require_sync(bool(requires_gradient_sync))

    def set_modules_to_forward_prefetch(self, modules):
        """Starts gathering the next module's parameters when this one's forward starts. ember
        learns the next one from the forward order (Note [Forward prefetch]), so `modules` only
        says that there is one to prefetch."""
        self._fsdp_forward_prefetch = list(modules)
        self._fsdp_params._set_forward_prefetch(bool(modules))

    def set_modules_to_backward_prefetch(self, modules):
        self._fsdp_backward_prefetch = list(modules)

    def set_reshard_after_backward(self, reshard_after_backward, *, recurse=True):
        """Accepted; ember always frees gathered parameters after backward."""

    def set_is_last_backward(self, is_last_backward):
        """Accepted; nothing is deferred to a last backward."""

    def set_requires_all_reduce(self, requires_all_reduce, *, recurse=True):
        """Accepted (HSDP's replica all-reduce always runs with the reduce-scatter)."""


_classes = {}


def _fsdp_class(cls):
    """FSDP<cls>: cls whose forward runs between gathering and resharding the parameters."""
    if issubclass(cls, FSDPModule):
        return cls
    if cls not in _classes:
        def forward(self, *args, **kwargs):
            mp = self._fsdp_mp
            if mp.param_dtype is not None and mp.cast_forward_inputs:
                args, kwargs = _cast(args, mp.param_dtype), _cast(kwargs, mp.param_dtype)
            params = self._fsdp_params
            params.pre_forward()
            try:
                out = cls.forward(self, *args, **kwargs)
            except BaseException:
                params.post_forward(None)
                raise
            params.post_forward(out)
            return _cast(out, mp.output_dtype) if mp.output_dtype is not None else out

        _classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls),
                             {"forward": forward, "__module__": cls.__module__, "__slots__": ()})
    return _classes[cls]


def _resolve(p):
    """clip_grad_norm_'s resolver: how a sharded parameter's norm pieces combine over its ranks."""
    spec = _specs.get(_C._nn._tensor_id(p))
    return spec.reduce if spec is not None else None


def _mark_dtensors(module, params, mesh, group):
    """Each sharded parameter comes back from module as a DTensor (Note [Sharded parameters])."""
    def reduce(t, op):
        _d.all_reduce(t, op=_d.ReduceOp.MAX if op == "max" else _d.ReduceOp.SUM, group=group)

    if mesh is None:
        mesh = init_device_mesh("cpu", (_d.get_world_size(),))
    placements = (Replicate(), Shard(0)) if mesh.ndim == 2 else (Shard(0),)
    n = mesh.shape[-1]
    for shard, shape in zip(params._shards(), params.full_shapes()):
        rows = shape[0] if shape else 1
        _mark(shard, _Spec(mesh, placements, tuple(shape), (rows + n - 1) // n, group, reduce))


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(),
                ignored_params=None):
    """Shards `module`'s parameters (those not in a fully_shard-ed module below it) across the
    mesh's ranks, in place; returns the module. A 2-D mesh (replicate, shard) is HSDP."""
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("ember's fully_shard takes one module")
    if shard_placement_fn is not None:
        raise NotImplementedError("ember's fully_shard shards every parameter on dim 0; "
                                  "shard_placement_fn is not supported")
    if ignored_params:
        raise NotImplementedError("ember's fully_shard does not take ignored_params")
    group, per, norm_group = None, 0, None
    strategy = "FULL_SHARD" if reshard_after_forward else "SHARD_GRAD_OP"
    if mesh is not None and mesh.ndim == 2:
        # HSDP: sharded within rows, replicated across them; a norm's pieces sum along a row.
        strategy, per, norm_group = "HYBRID_SHARD", mesh.shape[1], mesh.get_group(1)
    elif mesh is not None:
        group = norm_group = mesh.get_group()
    nested = [m for m in module.modules() if m is not module and isinstance(m, FSDPModule)]
    params = _d._ShardedParams(module, nested, group, strategy, mp_policy.param_dtype,
                               mp_policy.reduce_dtype, per)
    _mark_dtensors(module, params, mesh, norm_group)
    module.__class__ = _fsdp_class(type(module))
    module._fsdp_params = params
    module._fsdp_mp = mp_policy
    if _resolve not in _clip_grad._shard_resolvers:
        _clip_grad._shard_resolvers.append(_resolve)
    return module


__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]
