"""FSDP's optimizer state dicts. The optimizer steps the shards, so its state (Adam's exp_avg, SGD's
momentum_buffer) is laid out as they are; a full optimizer state dict holds it per original
parameter under the parameter's name, as PyTorch's FSDP gives it (FSDP.full_optim_state_dict,
FSDP.optim_state_dict and optim_state_dict_to_load; get/set_optimizer_state_dict with
full_state_dict for fully_shard-ed models). Both ways go through the C++ layout (flat_param.h:
gather_like_shards, shard_like_parameters); every rank must call them."""
from ... import _C

_id = _C._nn._tensor_id


def _owners(model, unit_types):
    """(name prefix, owner) for each FSDP unit or fully_shard-ed module in model; an owner lays
    out its shards (_shards, _shard_names, _gather_like_shards, _shard_like_parameters)."""
    out = []
    for name, m in model.named_modules():
        if isinstance(m, unit_types):
            clean = ".".join(p for p in name.split(".") if p and p != "_fsdp_wrapped_module")
            out.append((clean + "." if clean else "", getattr(m, "_fsdp_params", m)))
    return out


def _laid_out(value):
    return isinstance(value, _C.Tensor) and value.dim() > 0


def full_optim_state_dict(model, optim, unit_types, rank0_only=False):
    osd = optim.state_dict()
    params = [p for group in optim.param_groups for p in group["params"]]
    index = {_id(p): i for i, p in enumerate(params)}
    state, names_of = {}, {}
    for prefix, owner in _owners(model, unit_types):
        shards, covered = owner._shards(), owner._shard_names()
        stepped = [_id(s) in index for s in shards]
        states = [osd["state"].get(index[_id(s)], {}) if on else {}
                  for s, on in zip(shards, stepped)]
        for s, names, on, st in zip(shards, covered, stepped, states):
            if on:
                names_of[index[_id(s)]] = [prefix + n for n in names]
                for key, value in st.items():
                    if not _laid_out(value):
                        for n in names:
                            state.setdefault(prefix + n, {})[key] = value
        for key in sorted({k for st in states for k, v in st.items() if _laid_out(v)}):
            parts = [st[key] if key in st else _C._ops.zeros_like(s.detach())
                     for st, s in zip(states, shards)]
            full = owner._gather_like_shards(parts)
            for names, on in zip(covered, stepped):
                for n in names if on else ():
                    state.setdefault(prefix + n, {})[key] = full[n]
    groups = []
    for group in osd["param_groups"]:
        names = [n for i in group["params"] for n in names_of.get(i, [])]
        groups.append({**group, "params": names})
    if rank0_only and _C._distributed.is_initialized() and _C._distributed.get_rank() != 0:
        return {}
    return {"state": state, "param_groups": groups}


def optim_state_dict_to_load(model, optim, full, unit_types):
    """A full optimizer state dict (keyed by names) as this rank's optimizer state dict, ready
    for optim.load_state_dict."""
    params = [p for group in optim.param_groups for p in group["params"]]
    index = {_id(p): i for i, p in enumerate(params)}
    saved = full["state"]
    state = {}
    for prefix, owner in _owners(model, unit_types):
        shards, covered = owner._shards(), owner._shard_names()
        keys = sorted({k for names in covered for n in names
                       for k, v in saved.get(prefix + n, {}).items() if _laid_out(v)})
        for key in keys:
            values = {n: saved[prefix + n][key] for names in covered for n in names
                      if key in saved.get(prefix + n, {})}
            for s, part in zip(shards, owner._shard_like_parameters(values)):
                if _id(s) in index:
                    state.setdefault(index[_id(s)], {})[key] = part
        for s, names in zip(shards, covered):
            if _id(s) in index and names and prefix + names[0] in saved:
                for key, value in saved[prefix + names[0]].items():
                    if not _laid_out(value):
                        state.setdefault(index[_id(s)], {})[key] = value
    groups = []
    for mine, theirs in zip(optim.state_dict()["param_groups"], full["param_groups"]):
        groups.append({**theirs, "params": mine["params"]})
    return {"state": state, "param_groups": groups}
