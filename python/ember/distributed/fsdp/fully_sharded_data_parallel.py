"""torch.distributed.fsdp.FullyShardedDataParallel over ember's C++ FSDP (ember/distributed/fsdp.h):
each rank keeps 1/N of every unit's parameters (flat), gathers a unit's for its forward and
backward, and reduce-scatters its gradients. Units come from auto_wrap_policy (wrap.py) or from
wrapping submodules by hand first."""
import contextlib
from collections import OrderedDict

from ... import _C
from .api import (BackwardPrefetch, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalStateDictConfig, MixedPrecision, ShardedOptimStateDictConfig,
                  ShardedStateDictConfig, ShardingStrategy, StateDictSettings, StateDictType)
from ...nn.modules.module import _IncompatibleKeys
from . import _optim_state, _sharded_state as _sharded
from ._fully_shard import _cast
from .wrap import _recursive_wrap

_d = _C._distributed


class FullyShardedDataParallel(_d.FullyShardedDataParallel):
    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None, device_id=None,
                 sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
                 use_orig_params=False, ignored_states=None, device_mesh=None):
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if strategy == ShardingStrategy._HYBRID_SHARD_ZERO2:
            raise ValueError("ember's FSDP does not have _HYBRID_SHARD_ZERO2; use HYBRID_SHARD")
        if isinstance(process_group, tuple):
            raise ValueError("ember's HYBRID_SHARD makes its own (intra-node, inter-node) groups "
                             "from LOCAL_WORLD_SIZE or a 2-D device_mesh; pass "
                             "process_group=None")
        if device_id is not None:
            module.to(device_id if not isinstance(device_id, int) else f"cuda:{device_id}")
        if auto_wrap_policy is not None:
            unit_args = dict(process_group=process_group, sharding_strategy=strategy,
                             cpu_offload=cpu_offload, mixed_precision=mixed_precision,
                             sync_module_states=sync_module_states, device_mesh=device_mesh,
                             forward_prefetch=forward_prefetch)
            _recursive_wrap(module, auto_wrap_policy,
                            lambda m: FullyShardedDataParallel(m, **unit_args),
                            ignored_modules=list(ignored_modules or ()), only_wrap_children=True)
        per_machine = 0  # HYBRID_SHARD: LOCAL_WORLD_SIZE, or the rows of a 2-D device mesh
        if device_mesh is not None and device_mesh.ndim == 2:
            per_machine = device_mesh.shape[1]
        elif device_mesh is not None:
            process_group = device_mesh.get_group()
        mp = mixed_precision
        super().__init__(module, process_group, strategy.name,
                         mp.param_dtype if mp is not None else None,
                         mp.reduce_dtype if mp is not None else None, sync_module_states,
                         per_machine)
        self._mixed_precision = mp
        self._set_forward_prefetch(bool(forward_prefetch))
        self._sharding_strategy = strategy
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        self._optim_state_dict_config = FullOptimStateDictConfig()
        self._is_root = True
        for unit in FullyShardedDataParallel.fsdp_modules(self):
            if unit is not self:
                unit._is_root = False

    @property
    def sharding_strategy(self):
        return self._sharding_strategy

    @property
    def mixed_precision(self):
        return self._mixed_precision or MixedPrecision()

    def forward(self, *args, **kwargs):
        mp = self._mixed_precision
        if mp is not None and mp.param_dtype is not None and (
                mp.cast_forward_inputs or (self._is_root and mp.cast_root_forward_inputs)):
            args, kwargs = _cast(args, mp.param_dtype), _cast(kwargs, mp.param_dtype)
        return super().forward(*args, **kwargs)

    def __getattr__(self, name):
        # Names the wrapper lacks are the wrapped module's (model.generate(...) under FSDP).
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or name == "_fsdp_wrapped_module":
                raise
            return getattr(super().__getattr__("_fsdp_wrapped_module"), name)

    def __getitem__(self, key):
        # Indexing reaches the wrapped module (an nn.Sequential), as PyTorch's FSDP does.
        return super().__getattr__("_fsdp_wrapped_module").__getitem__(key)

    # --- state dicts -------------------------------------------------------------------------
    @staticmethod
    def fsdp_modules(module, root_only=False):
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return [u for u in units if u._is_root] if root_only else units

    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
        """Sets how state_dict() of module's units works; returns the previous settings."""
        units = FullyShardedDataParallel.fsdp_modules(module)
        previous = StateDictSettings(units[0]._state_dict_type, units[0]._state_dict_config,
                                     units[0]._optim_state_dict_config) if units else None
        sharded = state_dict_type == StateDictType.SHARDED_STATE_DICT
        if sharded:
            for unit in units:
                _sharded.world_mesh(unit._sharding_strategy)  # refuses HYBRID_SHARD now
        config = state_dict_config or {StateDictType.FULL_STATE_DICT: FullStateDictConfig,
                                       StateDictType.LOCAL_STATE_DICT: LocalStateDictConfig,
                                       StateDictType.SHARDED_STATE_DICT:
                                           ShardedStateDictConfig}[state_dict_type]()
        optim_config = optim_state_dict_config or (ShardedOptimStateDictConfig() if sharded
                                                   else FullOptimStateDictConfig())
        for unit in units:
            unit._state_dict_type, unit._state_dict_config = state_dict_type, config
            unit._optim_state_dict_config = optim_config
        return previous

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        units = FullyShardedDataParallel.fsdp_modules(module)
        saved = [(u, u._state_dict_type, u._state_dict_config, u._optim_state_dict_config)
                 for u in units]
        FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config,
                                                     optim_state_dict_config)
        try:
            yield
        finally:
            for u, kind, config, optim_config in saved:
                u._state_dict_type, u._state_dict_config = kind, config
                u._optim_state_dict_config = optim_config

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """FULL_STATE_DICT (the default): the original names and full tensors, gathered from
        every rank (with rank0_only, other ranks get an empty dict). SHARDED_STATE_DICT: the
        original names, each parameter a DTensor of this rank's rows. LOCAL_STATE_DICT: this
        rank's flat shards."""
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            state = self._ember_state_dict()
        elif self._state_dict_type == StateDictType.SHARDED_STATE_DICT:
            state = _sharded.rows(self._full_state_dict(), _sharded.param_names(self, _UNIT),
                                  _sharded.world_mesh(self._sharding_strategy))
        else:
            state = self._full_state_dict()
            if getattr(self._state_dict_config, "rank0_only", False) and _d.get_rank() != 0:
                state = OrderedDict()
        out = destination if destination is not None else OrderedDict()
        for name, t in state.items():
            out[prefix + name] = t
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            return super().load_state_dict(state_dict, strict)
        self._load_full_state_dict(dict(_sharded.gathered(state_dict)))
        return _IncompatibleKeys([], [])

    # --- optimizer state dicts (keyed by the original parameters' names, full tensors) ----------
    @staticmethod
    def full_optim_state_dict(model, optim, optim_input=None, rank0_only=True, group=None):
        return _optim_state.full_optim_state_dict(model, optim, _UNIT, rank0_only)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """The full optimizer state dict (as under FULL_STATE_DICT), rank0_only as the model's
        optimizer state dict config says."""
        units = FullyShardedDataParallel.fsdp_modules(model)
        config = units[0]._optim_state_dict_config if units else FullOptimStateDictConfig()
        if isinstance(config, ShardedOptimStateDictConfig):
            return _sharded.optim_rows(
                _optim_state.full_optim_state_dict(model, optim, _UNIT),
                _sharded.param_names(model, _UNIT),
                _sharded.world_mesh(units[0]._sharding_strategy))
        return _optim_state.full_optim_state_dict(model, optim, _UNIT,
                                                  getattr(config, "rank0_only", False))

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                                 load_directly=False, group=None):
        osd = _optim_state.optim_state_dict_to_load(
            model, optim, _sharded.optim_gathered(optim_state_dict), _UNIT)
        if load_directly:
            optim.load_state_dict(osd)
        return osd

    @staticmethod
    def shard_full_optim_state_dict(full_optim_state_dict, model, optim_input=None, optim=None):
        if optim is None:
            raise ValueError("ember's shard_full_optim_state_dict needs optim= (the optimizer "
                             "over the model's shards)")
        return FullyShardedDataParallel.optim_state_dict_to_load(model, optim,
                                                                 full_optim_state_dict)

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        """Inside it, the units' modules hold their full parameters; with writeback, what is
        written into them goes back into the shards."""
        units = FullyShardedDataParallel.fsdp_modules(module) if recurse else [module]
        done = []
        try:
            for unit in units:
                unit._summon_full()
                done.append(unit)
            yield
        finally:
            for unit in done:
                unit._release_full(writeback)


FSDP = FullyShardedDataParallel
_UNIT = (FullyShardedDataParallel,)
