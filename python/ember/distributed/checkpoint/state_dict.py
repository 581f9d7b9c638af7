"""torch.distributed.checkpoint.state_dict: one way to take and give state dicts of a model however
it is parallelised (plain, DistributedDataParallel, FullyShardedDataParallel, fully_shard), under
the model's own parameter names: full (full_state_dict=True), or sharded, each sharded parameter
and its optimizer state a DTensor of this rank's rows, as torch.distributed.checkpoint saves them.
The optimizer's state is keyed by parameter names, as PyTorch's is."""
import contextlib
from dataclasses import dataclass

from ... import _C
from ..fsdp import _optim_state, _sharded_state as _sharded
from ..fsdp._fully_shard import FSDPModule
from ..fsdp.fully_sharded_data_parallel import FullyShardedDataParallel
from ..tensor import DTensor

_id = _C._nn._tensor_id


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _clean(name):
    parts = [p for p in name.split(".") if p not in ("_fsdp_wrapped_module", "module")]
    return ".".join(parts)


def _unwrapped(model):
    return model.module if isinstance(model, _C._distributed.DistributedDataParallel) else model


@contextlib.contextmanager
def _full_parameters(model, writeback):
    """Every fully_shard-ed module of model holds its full parameters inside."""
    units = [m for m in model.modules() if isinstance(m, FSDPModule)]
    done = []
    try:
        for unit in units:
            unit._fsdp_params.summon_full()
            done.append(unit)
        yield
    finally:
        for unit in done:
            unit._fsdp_params.release_full(writeback)


def get_model_state_dict(model, *, submodules=None, options=None):
    options = options or StateDictOptions()
    model = _unwrapped(model)
    if isinstance(model, FullyShardedDataParallel):
        state = model._full_state_dict()
        if not options.full_state_dict:
            state = _sharded.rows(state, _sharded.param_names(model, _FSDP),
                                  _sharded.world_mesh(model._sharding_strategy))
    elif options.full_state_dict:
        # The state dict's tensors are views of the gathered parameters, which outlive the
        # release (only the modules' slots go back to their shards): no copy needed.
        with _full_parameters(model, writeback=False):
            state = model.state_dict()
    else:
        state = model.state_dict()
    out = type(state)()
    if options.full_state_dict and options.cpu_offload and _C._distributed.is_initialized() and \
            _C._distributed.get_rank() != 0:
        return out  # PyTorch's rule: a full state dict offloaded to the CPU is rank 0's only
    frozen = {name for name, p in model.named_parameters() if not p.requires_grad}
    for name, t in state.items():
        if options.ignore_frozen_params and name in frozen:
            continue
        out[_clean(name)] = t.cpu() if options.cpu_offload else t
    return out


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Loads a state dict taken by get_model_state_dict (full, or this rank's shards)."""
    options = options or StateDictOptions()
    model = _unwrapped(model)
    if isinstance(model, FullyShardedDataParallel):
        model._load_full_state_dict(dict(_sharded.gathered(model_state_dict)))
        return None
    if options.full_state_dict:
        with _full_parameters(model, writeback=True):
            return model.load_state_dict(model_state_dict, strict=options.strict)
    return model.load_state_dict(model_state_dict, strict=options.strict)


_UNITS = (FSDPModule, FullyShardedDataParallel)
_FSDP = (FullyShardedDataParallel,)


def _one(optimizers):
    if isinstance(optimizers, (list, tuple)):
        if len(optimizers) != 1:
            raise NotImplementedError("ember's optimizer state dict helpers take one optimizer")
        return optimizers[0]
    return optimizers


def _init_optim_state(optim):
    """Gives an optimizer that has not stepped its state, with a step of zero gradients at a
    learning rate of 0 (PyTorch's way), so a checkpoint has tensors to load into."""
    if optim.state:
        return
    params = [p for group in optim.param_groups for p in group["params"]]
    if any(p.grad is not None for p in params):
        raise RuntimeError("an optimizer with gradients but no state: step it or zero_grad("
                           "set_to_none=True) before taking its state dict")
    for p in params:
        if p.requires_grad:
            p.grad = _C._ops.zeros_like(p.detach())
    lrs = [group["lr"] for group in optim.param_groups]
    for group in optim.param_groups:
        group["lr"] = 0.0
    try:
        optim.step()
    finally:
        for group, lr in zip(optim.param_groups, lrs):
            group["lr"] = lr
        optim.zero_grad(set_to_none=True)


def _param_names(model, optim):
    """The model's name of each of optim's parameters, in the optimizer's order."""
    names = {_id(p): _clean(n) for n, p in _unwrapped(model).named_parameters()}
    return [names.get(_id(p), str(i)) for i, p in
            enumerate(p for group in optim.param_groups for p in group["params"])]


def _by_name(model, optim):
    """optim's state dict keyed by parameter names; the state of a fully_shard-ed parameter as
    DTensors of its layout."""
    osd = optim.state_dict()
    names = _param_names(model, optim)
    specs = {_clean(n): p._spec for n, p in _unwrapped(model).named_parameters()
             if isinstance(p, DTensor)}
    state = {}
    for i, per in osd["state"].items():
        spec = specs.get(names[i])
        state[names[i]] = {k: DTensor._over(v, spec) if spec is not None and
                           isinstance(v, _C.Tensor) and v.dim() > 0 else v
                           for k, v in per.items()}
    groups = [{**g, "params": [names[i] for i in g["params"]]} for g in osd["param_groups"]]
    return {"state": state, "param_groups": groups}


def _by_index(model, optim, osd):
    """The inverse of _by_name: optim.load_state_dict's form."""
    index = {name: i for i, name in enumerate(_param_names(model, optim))}
    state = {index[name]: {k: v.to_local() if isinstance(v, DTensor) else v
                           for k, v in per.items()} for name, per in osd["state"].items()}
    groups = [{**g, "params": [index[n] if isinstance(n, str) else n for n in g["params"]]}
              for g in osd["param_groups"]]
    return {"state": state, "param_groups": groups}


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The optimizer's state per parameter name: with full_state_dict, whole tensors gathered
    from the shards (_optim_state.py); otherwise sharded (DTensors of this rank's rows)."""
    options = options or StateDictOptions()
    optim = _one(optimizers)
    _init_optim_state(optim)
    model = _unwrapped(model)
    if options.full_state_dict:
        return _optim_state.full_optim_state_dict(model, optim, _UNITS,
                                                  rank0_only=options.cpu_offload)
    if isinstance(model, FullyShardedDataParallel):
        return _sharded.optim_rows(_optim_state.full_optim_state_dict(model, optim, _FSDP),
                                   _sharded.param_names(model, _FSDP),
                                   _sharded.world_mesh(model._sharding_strategy))
    return _by_name(model, optim)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    options = options or StateDictOptions()
    optim = _one(optimizers)
    model = _unwrapped(model)
    if options.full_state_dict or isinstance(model, FullyShardedDataParallel):
        optim_state_dict = _optim_state.optim_state_dict_to_load(
            model, optim, _sharded.optim_gathered(optim_state_dict), _UNITS)
    elif any(isinstance(k, str) for k in optim_state_dict.get("state", {})):
        optim_state_dict = _by_index(model, optim, optim_state_dict)
    optim.load_state_dict(optim_state_dict)


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return set_model_state_dict(model, model_state_dict, options=options)


__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict",
           "get_optimizer_state_dict", "set_optimizer_state_dict", "get_state_dict",
           "set_state_dict"]
