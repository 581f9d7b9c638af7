"""ember.optim from Python: the same trajectories as PyTorch 1.13's optimizers and schedulers on
the same data, and param_groups read and written as dicts."""
import numpy as np
import pytest
import torch

import ember


def trajectory(lib, make_opt, steps=5, sched=None):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    if lib is ember:
        w = ember.from_numpy(w0.copy()).requires_grad_()
        xs = ember.from_numpy(x)
    else:
        w = torch.from_numpy(w0.copy()).requires_grad_()
        xs = torch.from_numpy(x)
    opt = make_opt(lib, [w])
    s = sched(lib, opt) if sched else None
    for _ in range(steps):
        opt.zero_grad()
        loss = ((xs @ w) ** 2).mean()
        loss.backward()
        opt.step()
        if s:
            s.step()
    return w.detach().numpy().copy()


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.SGD(p, lr=0.1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda lib, p: lib.optim.Adam(p, lr=0.01),
    lambda lib, p: lib.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True),
    lambda lib, p: lib.optim.AdamW(p, lr=0.01),
])
def test_optimizers_match_pytorch(make):
    np.testing.assert_allclose(trajectory(ember, make), trajectory(torch, make), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sched", [
    lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
    lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4),
])
def test_schedulers_match_pytorch(sched):
    make = lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.5)  # noqa: E731
    np.testing.assert_allclose(trajectory(ember, make, 6, sched), trajectory(torch, make, 6, sched),
                               rtol=1e-5, atol=1e-6)


def test_param_groups_are_dicts():
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[0]["momentum"] == 0.9 and "params" in opt.param_groups[1]
    for g in opt.param_groups:
        g["lr"] = 0.01
    assert opt.param_groups[1]["lr"] == 0.01
    adam = ember.optim.Adam([a], betas=(0.5, 0.6))
    assert adam.param_groups[0]["betas"] == (0.5, 0.6)
    sched = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    sched.step()
    assert sched.get_last_lr() == [0.005, 0.005] and sched.last_epoch == 1


def test_state_dict_round_trip_and_closure():
    w = ember.ones(2, requires_grad=True)
    opt = ember.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    state = opt.state_dict()
    w2 = ember.ones(2, requires_grad=True)
    opt2 = ember.optim.Adam([w2], lr=0.1)
    opt2.load_state_dict(state)
    assert set(opt2.state_dict()) == set(state)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() > 0


def test_bad_arguments_are_value_errors():
    w = ember.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="learning rate"):
        ember.optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.Adam([])
    with pytest.raises(ValueError, match="beta"):
        ember.optim.Adam([w], betas=(1.5, 0.9))


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_takes_pytorchs_iterates(line_search):
    rng = np.random.default_rng(0)
    a_np, y_np = rng.standard_normal((30, 5)), rng.standard_normal(30)

    def run(lib):
        A, y = lib.tensor(a_np), lib.tensor(y_np)
        w = lib.zeros(5, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([w], lr=0.5, max_iter=3, history_size=2,
                              line_search_fn=line_search)
        losses = []
        for _ in range(5):
            def closure():
                opt.zero_grad()
                loss = ((A @ w - y) ** 2).mean() + 0.1 * (w ** 4).sum()
                loss.backward()
                return loss
            losses.append(float(opt.step(closure)))
        return losses, w.detach().numpy(), opt.state[w]["func_evals"]

    (tl, tw, tn), (el, ew, en) = run(torch), run(ember)
    np.testing.assert_allclose(el, tl, rtol=1e-10)
    np.testing.assert_allclose(ew, tw, rtol=1e-9, atol=1e-12)
    assert en == tn
    with pytest.raises(ValueError, match="parameter groups"):
        ember.optim.LBFGS([{"params": [ember.zeros(1, requires_grad=True)]},
                           {"params": [ember.zeros(1, requires_grad=True)]}])
