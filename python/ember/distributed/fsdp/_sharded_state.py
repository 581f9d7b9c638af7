"""Sharded state dicts (PyTorch's SHARDED_STATE_DICT, and get_*_state_dict without
full_state_dict): each parameter, and each optimizer state laid out like it, as a DTensor of this
rank's Shard(0) rows, so torch.distributed.checkpoint can save them at one world size and load
them at another. fully_shard-ed parameters are such DTensors already; FSDP's flat shards are
gathered unit by unit and cut into rows."""
from ... import _C
from ..device_mesh import init_device_mesh
from ..tensor import DTensor, Shard, distribute_tensor
from ._optim_state import _owners

_d = _C._distributed


def param_names(model, unit_types):
    """The original names of the parameters model's units shard."""
    return {prefix + n for prefix, owner in _owners(model, unit_types)
            for names in owner._shard_names() for n in names}


def world_mesh(strategy):
    """The 1-D mesh FSDP's rows are cut over (the default group's ranks)."""
    if strategy is not None and strategy.name.startswith("_HYBRID") or \
            strategy is not None and strategy.name == "HYBRID_SHARD":
        raise NotImplementedError("ember's SHARDED_STATE_DICT covers FULL_SHARD, SHARD_GRAD_OP "
                                  "and NO_SHARD; for HYBRID_SHARD use FULL_STATE_DICT or "
                                  "fully_shard with a 2-D mesh")
    return init_device_mesh("cpu", (_d.get_world_size(),))


def rows(full, names, mesh):
    """full (name -> full tensor) with the tensors named in names cut into this rank's rows."""
    return type(full)((k, distribute_tensor(v, mesh, [Shard(0)], src_data_rank=None)
                       if k in names and isinstance(v, _C.Tensor) and v.dim() > 0 else v)
                      for k, v in full.items())


def gathered(state):
    """state with each DTensor as its full tensor (every rank must call it)."""
    return type(state)((k, v.full_tensor() if isinstance(v, DTensor) else v)
                       for k, v in state.items())


def optim_rows(full_osd, names, mesh):
    state = {name: rows(per, {k for k, v in per.items() if name in names}, mesh)
             for name, per in full_osd["state"].items()}
    return {"state": state, "param_groups": full_osd["param_groups"]}


def optim_gathered(osd):
    return {"state": {name: gathered(per) for name, per in osd["state"].items()},
            "param_groups": osd["param_groups"]}
