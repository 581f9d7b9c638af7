"""ember.optim beyond SGD and Adam (test_optim.py): ASGD, Rprop, SparseAdam, the other optimizers
with every option, and optim.swa_utils, each against PyTorch 1.13 on the same data (float64,
weights copied through numpy)."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def N(t):
    return np.asarray(t.detach().numpy())


def problem(lib, seed=0):
    """Two parameter tensors and a least-squares loss with a non-quadratic term, in float64."""
    rng = np.random.RandomState(seed)
    a, b = rng.randn(6, 3), rng.randn(6)
    w0, c0 = rng.randn(3), rng.randn(2)
    to = (lambda x: torch.tensor(x)) if lib is torch else (lambda x: ember.from_numpy(x.copy()))
    w, c = to(w0).requires_grad_(True), to(c0).requires_grad_(True)
    A, B = to(a), to(b)

    def loss():
        return ((A @ w - B) ** 2).sum() + (c ** 4).sum() + (w[:2] * c).sum()
    return [w, c], loss


def trajectory(lib, name, kwargs, steps=12, groups=False):
    params, loss = problem(lib)
    opt_cls = getattr(lib.optim, name)
    if groups:
        # A second group with its own lr (and the group-level options of the first).
        opt = opt_cls([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.003}], **kwargs)
    else:
        opt = opt_cls(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss().backward()
        opt.step()
    return [N(p) for p in params], opt


CASES = [
    ("ASGD", {}),
    ("ASGD", dict(lr=0.02, lambd=1e-3, alpha=0.6, t0=4, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, t0=2, maximize=True)),
    ("ASGD", dict(lr=0.01, foreach=False)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.01, maximize=True, foreach=False)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=1e-2)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.7, 0.8), weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adagrad", dict(lr=0.05)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.2,
                     eps=1e-8, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5,
                     centered=True, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CASES)
@pytest.mark.parametrize("groups", [False, True])
def test_optimizer_matches_pytorch(name, kwargs, groups):
    ours, _ = trajectory(ember, name, kwargs, groups=groups)
    theirs, _ = trajectory(torch, name, kwargs, groups=groups)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [("ASGD", dict(t0=3)), ("Rprop", {})])
def test_state_matches_pytorch(name, kwargs):
    _, ours = trajectory(ember, name, kwargs, steps=6)
    _, theirs = trajectory(torch, name, kwargs, steps=6)
    so, st = ours.state_dict(), theirs.state_dict()
    # ember's groups also hold PyTorch 2.x's options (differentiable, capturable) at their
    # defaults.
    extra = {"differentiable": False, "capturable": False}
    assert [{k: v for k, v in g.items() if k not in extra} for g in so["param_groups"]] == \
        st["param_groups"]
    assert all(all(g[k] == v for k, v in extra.items()) for g in so["param_groups"])
    for i in st["state"]:
        assert set(so["state"][i]) == set(st["state"][i])
        for key, value in st["state"][i].items():
            mine = so["state"][i][key]
            if isinstance(value, torch.Tensor):
                assert mine.dtype == ember.from_numpy(value.numpy()).dtype, key
                np.testing.assert_allclose(N(mine), value.numpy(), rtol=1e-10, atol=1e-12)
            else:
                assert type(mine) is type(value) and mine == value, key


def test_state_dict_round_trip_continues_the_trajectory():
    params, loss = problem(ember)
    opt = ember.optim.ASGD(params, lr=0.01, t0=2)
    for _ in range(3):
        opt.zero_grad()
        loss().backward()
        opt.step()
    params2 = [ember.from_numpy(N(p).copy()).requires_grad_(True) for p in params]
    opt2 = ember.optim.ASGD(params2, lr=0.01, t0=2)
    opt2.load_state_dict(opt.state_dict())
    for ps, o in ((params, opt), (params2, opt2)):
        o.zero_grad()
        (sum((p ** 2).sum() for p in ps)).backward()
        o.step()
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(N(a), N(b))


def test_signatures_match_pytorch():
    import inspect
    for name in ["ASGD", "Rprop", "SparseAdam"]:
        theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters
        ours = inspect.signature(getattr(ember.optim, name).__init__).parameters
        for arg, p in theirs.items():
            assert arg in ours, (name, arg)
            assert ours[arg].default == p.default, (name, arg)
            assert ours[arg].kind == p.kind, (name, arg)


@pytest.mark.parametrize("make,message", [
    (lambda lib, p: lib.optim.ASGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda lib, p: lib.optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda lib, p: lib.optim.Rprop(p, lr=-1), "Invalid learning rate: -1"),
    (lambda lib, p: lib.optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda lib, p: lib.optim.SparseAdam(p, lr=0), "Invalid learning rate: 0"),
    (lambda lib, p: lib.optim.SparseAdam(p, eps=0), "Invalid epsilon value: 0"),
    (lambda lib, p: lib.optim.SparseAdam(p, betas=(1.0, 0.9)),
     "Invalid beta parameter at index 0: 1.0"),
])
def test_bad_arguments_match_pytorch(make, message):
    for lib in (torch, ember):
        params, _ = problem(lib)
        with pytest.raises(ValueError, match=message):
            make(lib, params)


def test_sparse_adam_refuses_dense_gradients():
    # ember has no sparse tensors: every gradient is dense, which PyTorch's SparseAdam refuses.
    for lib in (torch, ember):
        params, loss = problem(lib)
        opt = lib.optim.SparseAdam(params)
        assert opt.defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)
        loss().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()
    opt.zero_grad(set_to_none=True)
    opt.step()  # no gradient: nothing to refuse


# --- swa_utils ---

def seq(lib, features=4):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, features), nn.BatchNorm1d(features), nn.ReLU(),
                         nn.Linear(features, 2)).double()


def copy_into(ember_model, torch_model):
    ember_model.load_state_dict({k: E(v) for k, v in torch_model.state_dict().items()})


def assert_state_equal(ember_model, torch_model, rtol=1e-12, atol=1e-12):
    ours, theirs = ember_model.state_dict(), torch_model.state_dict()
    assert list(ours) == list(theirs)
    for k, v in theirs.items():
        np.testing.assert_allclose(N(ours[k]).astype(np.float64), v.double().numpy(), rtol=rtol,
                                   atol=atol, err_msg=k)


def perturb(torch_model, ember_model, scale=0.5):
    with torch.no_grad():
        for p in torch_model.parameters():
            p.add_(scale * torch.randn_like(p))
    copy_into(ember_model, torch_model)


@pytest.mark.parametrize("kind", ["swa", "custom", "ema", "ema_multi", "swa_multi"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_matches_pytorch(kind, use_buffers):
    torch.manual_seed(0)
    tm, em = seq(torch), seq(ember)
    copy_into(em, tm)

    def custom(lib):
        return lambda avg, cur, n: 0.25 * avg + 0.75 * cur

    if kind == "swa":
        ta = torch.optim.swa_utils.AveragedModel(tm, use_buffers=use_buffers)
        ea = ember.optim.swa_utils.AveragedModel(em, use_buffers=use_buffers)
    elif kind == "custom":
        ta = torch.optim.swa_utils.AveragedModel(tm, avg_fn=custom(torch), use_buffers=use_buffers)
        ea = ember.optim.swa_utils.AveragedModel(em, avg_fn=custom(ember), use_buffers=use_buffers)
    else:
        # PyTorch 1.13 has no get_*_avg_fn: their 2.x definitions, written out for torch.
        decay = 0.9
        if kind == "ema":
            ta = torch.optim.swa_utils.AveragedModel(
                tm, avg_fn=lambda e, c, n: decay * e + (1 - decay) * c, use_buffers=use_buffers)
            ea = ember.optim.swa_utils.AveragedModel(
                em, avg_fn=ember.optim.swa_utils.get_ema_avg_fn(decay), use_buffers=use_buffers)
        elif kind == "ema_multi":
            ta = torch.optim.swa_utils.AveragedModel(
                tm, avg_fn=lambda e, c, n: (e.lerp(c, 1 - decay) if e.is_floating_point()
                                            else e * decay + c * (1 - decay)),
                use_buffers=use_buffers)
            ea = ember.optim.swa_utils.AveragedModel(
                em, multi_avg_fn=ember.optim.swa_utils.get_ema_multi_avg_fn(decay),
                use_buffers=use_buffers)
        else:
            ta = torch.optim.swa_utils.AveragedModel(
                tm, avg_fn=lambda e, c, n: (e.lerp(c, 1 / (int(n) + 1)) if e.is_floating_point()
                                            else e + (c - e) / (n + 1)),
                use_buffers=use_buffers)
            ea = ember.optim.swa_utils.AveragedModel(
                em, multi_avg_fn=ember.optim.swa_utils.get_swa_multi_avg_fn(),
                use_buffers=use_buffers)
    x = torch.randn(8, 3, dtype=torch.float64)
    for _ in range(4):
        perturb(tm, em)
        tm(x)  # training mode: the batch norm's running statistics move too
        em(E(x))
        ta.update_parameters(tm)
        ea.update_parameters(em)
    assert int(ea.n_averaged) == int(ta.n_averaged) == 4
    assert_state_equal(ea, ta)
    ta.eval()
    ea.eval()
    np.testing.assert_allclose(N(ea(E(x))), ta(x).detach().numpy(), rtol=1e-12, atol=1e-12)


def test_averaged_model_takes_one_averaging_function():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        ember.optim.swa_utils.AveragedModel(seq(ember), avg_fn=lambda a, b, n: a,
                                            multi_avg_fn=lambda a, b, n: None)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batches", ["tensors", "pairs"])
def test_update_bn_matches_pytorch(dtype, batches):
    torch.manual_seed(1)
    tm, em = seq(torch, 5), seq(ember, 5)
    tm.to(getattr(torch, dtype))
    em.to(getattr(ember, dtype))
    copy_into(em, tm)
    data = [torch.randn(7, 3, dtype=getattr(torch, dtype)) * 2 + 1 for _ in range(5)]
    if batches == "pairs":
        tl = [(x, torch.zeros(7)) for x in data]
        el = [[E(x), ember.zeros(7)] for x in data]
    else:
        tl, el = data, [E(x) for x in data]
    tm.eval()
    em.eval()
    torch.optim.swa_utils.update_bn(tl, tm)
    ember.optim.swa_utils.update_bn(el, em)
    assert not em.training  # the mode is restored
    # In float32 the recovery of each batch's statistics scales the running value's rounding by
    # 1/momentum (see update_bn's docstring).
    tol = 1e-12 if dtype == "float64" else 2e-5
    assert_state_equal(em, tm, rtol=tol, atol=tol)


def test_update_bn_without_batch_norm_does_nothing():
    em = ember.nn.Linear(3, 2)
    before = N(em.weight).copy()
    ember.optim.swa_utils.update_bn([ember.randn(2, 3)], em)
    np.testing.assert_array_equal(N(em.weight), before)


@pytest.mark.parametrize("kwargs", [
    dict(swa_lr=0.05),
    dict(swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=[0.05, 0.2], anneal_epochs=4),
    dict(swa_lr=0.5, anneal_epochs=0),
])
def test_swalr_matches_pytorch(kwargs):
    lrs = {}
    for lib in (torch, ember):
        params, loss = problem(lib)
        opt = lib.optim.SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}],
                            lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
        seen = [sched.get_last_lr()]
        for _ in range(8):
            opt.zero_grad()
            loss().backward()
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        lrs[lib] = seen
    np.testing.assert_allclose(lrs[ember], lrs[torch], rtol=1e-14)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(swa_lr=0.1, anneal_strategy="exp"), ValueError,
     "anneal_strategy must by one of 'cos' or 'linear', instead got exp"),
    (dict(swa_lr=0.1, anneal_epochs=-1), ValueError,
     "anneal_epochs must be equal or greater than 0, got -1"),
    (dict(swa_lr=[0.1, 0.2, 0.3]), ValueError, "swa_lr must have the same length as"),
])
def test_swalr_errors_match_pytorch(kwargs, error, message):
    for lib in (torch, ember):
        params, _ = problem(lib)
        opt = lib.optim.SGD(params, lr=0.1)
        with pytest.raises(error, match=message):
            lib.optim.swa_utils.SWALR(opt, **kwargs)


def test_swalr_get_lr_outside_step_warns():
    params, _ = problem(ember)
    sched = ember.optim.swa_utils.SWALR(ember.optim.SGD(params, lr=0.1), swa_lr=0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.get_lr()
    assert any("get_last_lr()" in str(w.message) for w in caught)


def test_names_match_pytorch():
    import torch.optim.swa_utils  # noqa: F401
    for mod in ("optim", "optim.lr_scheduler", "optim.swa_utils"):
        theirs = eval("torch." + mod)
        ours = eval("ember." + mod)
        missing = [n for n in dir(theirs) if not n.startswith("_") and n not in dir(ours)
                   and n not in ("torch", "math")]
        assert missing == [], (mod, missing)
    assert math.isinf(ember.optim.lr_scheduler.inf)


# --- PyTorch 2.x options of NAdam and RAdam (not in 1.13: checked against their definitions) ---

def run_2x(lib, name, steps=10, maximize=False, decoupled=0.0, **kwargs):
    """lib's optimizer; for torch, PyTorch 2.x's maximize (minimizing -loss) and decoupled weight
    decay (params scaled by 1 - lr * weight_decay before a step without weight decay) spelled
    out."""
    params, loss = problem(lib)
    if lib is torch:
        opt = getattr(torch.optim, name)(params, **kwargs)
    else:
        extra = dict(maximize=maximize)
        if decoupled:
            extra.update(decoupled_weight_decay=True, weight_decay=decoupled)
        opt = getattr(ember.optim, name)(params, **kwargs, **extra)
    for _ in range(steps):
        opt.zero_grad()
        value = loss()
        (-value if (lib is torch and maximize) else value).backward()
        if lib is torch and decoupled:
            with torch.no_grad():
                for p in params:
                    p.mul_(1 - kwargs["lr"] * decoupled)
        opt.step()
    return [N(p) for p in params]


@pytest.mark.parametrize("name", ["NAdam", "RAdam"])
@pytest.mark.parametrize("maximize,decoupled", [(True, 0.0), (False, 0.2), (True, 0.2)])
def test_nadam_radam_pytorch2_options(name, maximize, decoupled):
    ours = run_2x(ember, name, maximize=maximize, decoupled=decoupled, lr=0.01)
    theirs = run_2x(torch, name, maximize=maximize, decoupled=decoupled, lr=0.01)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
