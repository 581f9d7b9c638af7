"""torch.distributed.checkpoint.state_dict: one way to take and give state dicts of a model however
it is parallelised (plain, DistributedDataParallel, FullyShardedDataParallel, fully_shard), under
the model's own parameter names. ember gives full state dicts (full_state_dict=True) and, for
fully_shard-ed models without it, each rank's local shards."""
import contextlib
from dataclasses import dataclass

from ... import _C
from ..fsdp import _optim_state
from ..fsdp._fully_shard import FSDPModule
from ..fsdp.fully_sharded_data_parallel import FullyShardedDataParallel


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
        model._load_full_state_dict(dict(model_state_dict))
        return None
    if options.full_state_dict:
        with _full_parameters(model, writeback=True):
            return model.load_state_dict(model_state_dict, strict=options.strict)
    return model.load_state_dict(model_state_dict, strict=options.strict)


_UNITS = (FSDPModule, FullyShardedDataParallel)


def _one(optimizers):
    if isinstance(optimizers, (list, tuple)):
        if len(optimizers) != 1:
            raise NotImplementedError("ember's optimizer state dict helpers take one optimizer")
        return optimizers[0]
    return optimizers


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """With full_state_dict, the state per original parameter name, gathered from the shards
    (_optim_state.py); otherwise the optimizer's own (per local shard under FSDP)."""
    options = options or StateDictOptions()
    optim = _one(optimizers)
    if options.full_state_dict:
        return _optim_state.full_optim_state_dict(
            _unwrapped(model), optim, _UNITS, rank0_only=options.cpu_offload)
    return optim.state_dict()


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    options = options or StateDictOptions()
    optim = _one(optimizers)
    if options.full_state_dict:
        optim_state_dict = _optim_state.optim_state_dict_to_load(
            _unwrapped(model), optim, optim_state_dict, _UNITS)
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
