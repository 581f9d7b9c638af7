"""One rank of test_fsdp.py's API checks, written against PyTorch's FSDP API (run by
`ember launch ... python -m ember.run fsdp_worker.py CASE`); prints "CASE ok" when every check
holds."""
import functools
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import (FullStateDictConfig, LocalStateDictConfig, ShardingStrategy,
                                    StateDictType)
from torch.distributed.fsdp.wrap import (ModuleWrapPolicy, enable_wrap, lambda_auto_wrap_policy,
                                         size_based_auto_wrap_policy, wrap)


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), nn.ReLU(),
                         nn.Sequential(nn.Linear(32, 32), nn.ReLU()), nn.Linear(32, 3))


def data(rank, world, n=8):
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(n, 6, generator=g), torch.randn(n, 3, generator=g)
    per = n // world
    return x, y, x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]


def summon(rank, world):
    model = FSDP(make_model(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    inner = model.module[0].module  # the first Linear, a unit of its own
    with FSDP.summon_full_params(model):
        assert tuple(inner.weight.shape) == (32, 6), inner.weight.shape
        with torch.no_grad():
            inner.weight.fill_(0.25)
    with FSDP.summon_full_params(model, writeback=False):
        assert inner.weight.eq(0.25).all()
        with torch.no_grad():
            inner.weight.fill_(9.0)
    state = model.state_dict()
    assert state["0.weight"].eq(0.25).all(), state["0.weight"]


def state_dicts(rank, world):
    plain = make_model()
    model = FSDP(make_model(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    state = model.state_dict()
    assert list(state) == list(plain.state_dict()), list(state)
    for (name, got), want in zip(state.items(), plain.state_dict().values()):
        assert torch.equal(got, want), name
    new = {k: torch.full_like(v, 0.125) * (i + 1) for i, (k, v) in enumerate(state.items())}
    model.load_state_dict(new)
    plain.load_state_dict(new)
    x = torch.randn(4, 6)
    assert torch.equal(model(x), plain(x))
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
        full = model.state_dict()
        assert (len(full) == 6) if rank == 0 else (len(full) == 0), list(full)
    with FSDP.state_dict_type(model, StateDictType.LOCAL_STATE_DICT, LocalStateDictConfig()):
        local = model.state_dict()
        assert all("_flat_param" in k for k in local), list(local)
        assert sum(v.numel() for v in local.values()) * world >= sum(
            v.numel() for v in state.values())
        model.load_state_dict(local)
    assert list(model.state_dict()) == list(state)  # the context restored FULL_STATE_DICT


def no_sync(rank, world):
    # Two micro-batches per rank, the first under no_sync: the same step as one process taking
    # the sum of the mean losses of each micro-batch over the whole batch.
    x, y, _, _ = data(rank, world, 16)
    ref = make_model()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (F.mse_loss(ref(x[:8]), y[:8]) + F.mse_loss(ref(x[8:]), y[8:])).backward()
    ref_opt.step()
    model = FSDP(make_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    per = 8 // world
    mine = slice(rank * per, (rank + 1) * per)
    with model.no_sync():
        F.mse_loss(model(x[:8][mine]), y[:8][mine]).backward()
    assert all(p.grad is None for p in model.parameters())
    F.mse_loss(model(x[8:][mine]), y[8:][mine]).backward()
    opt.step()
    for name, t in model.state_dict().items():
        torch.testing.assert_close(t, ref.state_dict()[name], rtol=1e-5, atol=1e-6)


def policies(rank, world):
    size = FSDP(make_model(), auto_wrap_policy=functools.partial(size_based_auto_wrap_policy,
                                                                  min_num_params=1000))
    # Only the inner Sequential (1056 parameters) is large enough; then the root.
    assert len(FSDP.fsdp_modules(size)) == 2, size
    assert len(FSDP.fsdp_modules(size, root_only=True)) == 1
    lam = FSDP(make_model(), auto_wrap_policy=functools.partial(
        lambda_auto_wrap_policy, lambda_fn=lambda m: isinstance(m, nn.Linear) and m.out_features == 3))
    assert len(FSDP.fsdp_modules(lam)) == 2
    with enable_wrap(wrapper_cls=FSDP, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP):
        layer = wrap(nn.Linear(4, 4))
    assert isinstance(layer, FSDP) and layer.sharding_strategy == ShardingStrategy.SHARD_GRAD_OP
    assert isinstance(nn.Linear(2, 2), nn.Module) and not isinstance(wrap(nn.Linear(2, 2)), FSDP)
    # FSDP forwards what it lacks to the module; clip_grad_norm_ takes every shard's part.
    model = FSDP(make_model(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    assert isinstance(model[3], FSDP) and model.module is model._fsdp_wrapped_module  # indexing
    x, y, xs, ys = data(rank, world)
    F.mse_loss(model(xs), ys).backward()
    ref = make_model()
    F.mse_loss(ref(x), y).backward()
    want = torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.01)
    got = model.clip_grad_norm_(0.01)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-7)


def errors(rank, world):
    model = FSDP(make_model())
    # SHARDED_STATE_DICT: each parameter a DTensor of this rank's rows of the full one.
    full = model.state_dict()
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        sharded = model.state_dict()
    assert sorted(sharded) == sorted(full)
    for name, t in sharded.items():
        assert type(t).__name__ == "DTensor", (name, type(t))
        torch.testing.assert_close(t.full_tensor(), full[name], rtol=0, atol=0)
    state = model.state_dict()
    del state["3.bias"]
    try:
        model.load_state_dict(state)
        raise AssertionError("a missing key was accepted")
    except RuntimeError as e:
        assert "missing keys [3.bias]" in str(e), e


def fully_shard_api(rank, world):
    from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                         set_model_state_dict)
    from torch.distributed.fsdp import FSDPModule, fully_shard
    model = make_model()
    plain = make_model()
    fully_shard(model[2])
    fully_shard(model)
    assert isinstance(model, FSDPModule) and isinstance(model, nn.Sequential)
    assert type(model).__name__ == "FSDPSequential", type(model)
    # Parameters keep their names and dimensions, with 1/N of their rows.
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert shapes["0.weight"] == (32 // world, 6) and shapes["2.0.weight"] == (32 // world, 32), \
        shapes
    # The parameters are DTensors, sharded on dim 0 (PyTorch's inspection in pytorch/examples'
    # FSDP2 example); each gathers back to the whole.
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed._composable.fsdp import fully_shard as fully_shard_2_4
    from torch.distributed._tensor import DTensor as DTensor_2_4
    assert fully_shard_2_4 is fully_shard and DTensor_2_4 is DTensor
    for name, p in model.named_parameters():
        assert isinstance(p, DTensor) and isinstance(p, nn.Parameter), (name, type(p))
        assert p.placements == (Shard(0),), p.placements
        assert p.to_local().numel() <= plain.state_dict()[name].numel() // world + 32
        assert torch.equal(p.full_tensor(), plain.state_dict()[name]), name
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    for name, want in plain.state_dict().items():
        assert torch.equal(full[name], want), name
    set_model_state_dict(model, {k: v * 0 + 0.5 for k, v in full.items()},
                         options=StateDictOptions(full_state_dict=True))
    assert all(bool(p.eq(0.5).all()) for p in model.parameters())
    # Accumulation: no gradient sync for the first micro-batch, then one step equal to one
    # process's on the sum of the two micro-batches' losses.
    model, ref = make_model(), make_model()
    fully_shard(model[2])
    fully_shard(model)
    x, y, _, _ = data(rank, world, 16)
    (F.mse_loss(ref(x[:8]), y[:8]) + F.mse_loss(ref(x[8:]), y[8:])).backward()
    torch.optim.SGD(ref.parameters(), lr=0.1).step()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    per = 8 // world
    mine = slice(rank * per, (rank + 1) * per)
    model.set_requires_gradient_sync(False)
    F.mse_loss(model(x[:8][mine]), y[:8][mine]).backward()
    model.set_requires_gradient_sync(True)
    F.mse_loss(model(x[8:][mine]), y[8:][mine]).backward()
    opt.step()
    got = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    for name, want in ref.state_dict().items():
        torch.testing.assert_close(got[name], want, rtol=1e-5, atol=1e-6)


def optim_state(rank, world):
    # Adam's state after a step under FSDP (a unit per Linear) and under fully_shard, as a full
    # optimizer state dict, equals one process's on the whole batch by name; loaded into a fresh
    # model and optimizer, a second step gives that process's second step.
    from torch.distributed.checkpoint.state_dict import (StateDictOptions,
                                                         get_model_state_dict,
                                                         get_optimizer_state_dict,
                                                         set_model_state_dict,
                                                         set_optimizer_state_dict)
    from torch.distributed.fsdp import fully_shard
    x, y, xs, ys = data(rank, world)
    ref = make_model()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    F.mse_loss(ref(x), y).backward()
    ref_opt.step()
    names = [n for n, _ in ref.named_parameters()]
    first = {i: {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in st.items()}
             for i, st in ref_opt.state_dict()["state"].items()}  # before the second step
    full = FullStateDictConfig()
    options = StateDictOptions(full_state_dict=True)

    def wrapped(kind):
        model = make_model()
        if kind == "fsdp":
            return FSDP(model, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
        for layer in (model[0], model[2][0], model[3]):
            fully_shard(layer)
        return fully_shard(model)

    def save(kind, model, opt):
        if kind == "fsdp":
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, full):
                return model.state_dict(), FSDP.optim_state_dict(model, opt)
        return (get_model_state_dict(model, options=options),
                get_optimizer_state_dict(model, opt, options=options))

    def load(kind, model, opt, state, osd):
        if kind == "fsdp":
            model.load_state_dict(state)
            opt.load_state_dict(FSDP.optim_state_dict_to_load(model, opt, osd))
        else:
            set_model_state_dict(model, state, options=options)
            set_optimizer_state_dict(model, opt, osd, options=options)

    ref_opt.zero_grad()
    F.mse_loss(ref(x), y).backward()
    ref_opt.step()
    for kind in ("fsdp", "fully_shard"):
        model = wrapped(kind)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        F.mse_loss(model(xs), ys).backward()
        opt.step()
        state, osd = save(kind, model, opt)
        assert sorted(osd["param_groups"][0]["params"]) == sorted(names), osd["param_groups"]
        for i, name in enumerate(names):
            for key in ("exp_avg", "exp_avg_sq"):
                torch.testing.assert_close(osd["state"][name][key], first[i][key],
                                           rtol=1e-5, atol=1e-7)
            assert float(osd["state"][name]["step"]) == 1.0, osd["state"][name]["step"]
        again = wrapped(kind)
        opt2 = torch.optim.Adam(again.parameters(), lr=0.01)
        load(kind, again, opt2, state, osd)
        F.mse_loss(again(xs), ys).backward()
        opt2.step()
        got = save(kind, again, opt2)[0]
        for name, want in ref.state_dict().items():
            torch.testing.assert_close(got[name], want, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    # As PyTorch 2.x programs start (pytorch/examples' FSDP2 example).
    device = torch.device("cpu")
    dist.init_process_group(backend=dist.get_default_backend_for_device(device), device_id=device)
    case = sys.argv[1]
    {"summon": summon, "state_dicts": state_dicts, "no_sync": no_sync, "policies": policies,
     "errors": errors, "fully_shard_api": fully_shard_api, "optim_state": optim_state}[case](dist.get_rank(), dist.get_world_size())
    print(f"{case} ok", flush=True)
    dist.destroy_process_group()
