"""ember.optim.lr_scheduler against PyTorch 1.13's: the same lr (and momentum) sequences from the
same param groups, state_dict round trips mid-run, compositions, ReduceLROnPlateau on a metric
sequence, fractional epochs, and the same errors and warnings for bad use."""
import copy
import pickle
import warnings

import pytest
import torch

import ember

STEPS = 30


class StandInOptimizer:
    """PyTorch's Optimizer layout without tensors, for an ember.optim that lacks it."""

    def __init__(self, groups, defaults):
        self.defaults = dict(defaults)
        self.state = {}
        self.param_groups = []
        for group in groups:
            full = dict(defaults)
            full.update(group)
            self.param_groups.append(full)

    def zero_grad(self, set_to_none=False):
        pass

    def step(self, closure=None):
        return None if closure is None else closure()


# The optimizers' defaults, as torch 1.13 writes them into each param group.
_DEFAULTS = {
    "SGD": dict(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False,
                maximize=False, foreach=None, differentiable=False),
    "Adam": dict(lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=False),
}


def make_optimizer(lib, kind="SGD", lrs=(0.1, 0.01)):
    """Two param groups (lr 0.1 and 0.01) of one parameter each; kind is SGD or Adam."""
    groups = [{"params": [lib.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    extra = {"momentum": 0.9} if kind == "SGD" else {}
    if lib is torch:
        return getattr(torch.optim, kind)(groups, lr=0.1, **extra)
    try:
        opt = getattr(ember.optim, kind)(groups, lr=0.1, **extra)
        if isinstance(opt.param_groups[0], dict) and hasattr(opt, "defaults"):
            return opt
    except Exception:  # noqa: BLE001 - an ember.optim without torch's layout: use the stand-in
        pass
    return StandInOptimizer(groups, dict(_DEFAULTS[kind], **extra))


def record(opt):
    """What a scheduler sets: each group's lr, and its momentum or beta1 when it has one."""
    out = []
    for g in opt.param_groups:
        out.append(g["lr"])
        if "momentum" in g:
            out.append(g["momentum"])
        if "betas" in g:
            out.append(tuple(g["betas"]))
    return out


def sched_module(lib):
    return lib.optim.lr_scheduler


def copy_hyperparameters(src, dst):
    """What optimizer.load_state_dict does to the param groups."""
    for gs, gd in zip(src.param_groups, dst.param_groups):
        for key, value in gs.items():
            if key != "params":
                gd[key] = value


def run(lib, make, kind="SGD", steps=STEPS, reload_at=None, step_arg=None):
    """The recorded values after construction and after each optimizer + scheduler step; with
    reload_at, the state is saved there and loaded into a new optimizer and scheduler."""
    opt = make_optimizer(lib, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make(sched_module(lib), opt)
        seq = [record(opt)]
        for i in range(steps):
            if reload_at is not None and i == reload_at:
                state = sched.state_dict()
                # Torch 1.13's CyclicLR state holds a weak reference to the old scheduler's
                # method, dead once it is gone (torch 2.0 saves none): load without it.
                state.pop("_scale_fn_ref", None)
                opt2 = make_optimizer(lib, kind)
                sched = make(sched_module(lib), opt2)
                copy_hyperparameters(opt, opt2)
                sched.load_state_dict(state)
                opt = opt2
            opt.step()
            if step_arg is None:
                sched.step()
            else:
                sched.step(step_arg(i))
            seq.append(record(opt) + [list(sched.get_last_lr())])
    return seq


def lam_a(e):
    return 0.95 ** e


class Halving:
    """A callable object with state: LambdaLR's state_dict keeps its __dict__."""

    def __init__(self, every):
        self.every = every

    def __call__(self, e):
        return 0.5 ** (e // self.every)


CASES = {
    "LambdaLR": (lambda m, o: m.LambdaLR(o, [lam_a, lambda e: 1 / (e + 1)]), "SGD"),
    "LambdaLR_object": (lambda m, o: m.LambdaLR(o, Halving(4)), "SGD"),
    "MultiplicativeLR": (lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.8),
                         "SGD"),
    "StepLR": (lambda m, o: m.StepLR(o, step_size=3, gamma=0.5), "SGD"),
    "MultiStepLR": (lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 15], gamma=0.3), "SGD"),
    "ConstantLR": (lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4), "SGD"),
    "ConstantLR_default": (lambda m, o: m.ConstantLR(o), "Adam"),
    "LinearLR": (lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8),
                 "SGD"),
    "LinearLR_default": (lambda m, o: m.LinearLR(o), "SGD"),
    "ExponentialLR": (lambda m, o: m.ExponentialLR(o, gamma=0.9), "SGD"),
    "PolynomialLR": (lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0), "SGD"),
    "CosineAnnealingLR": (lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001), "SGD"),
    "CyclicLR_triangular": (lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.01],
                                                    step_size_up=4, step_size_down=6), "SGD"),
    "CyclicLR_triangular2": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                     mode="triangular2",
                                                     base_momentum=[0.7, 0.75],
                                                     max_momentum=0.95), "SGD"),
    "CyclicLR_exp_range": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                                   gamma=0.95), "SGD"),
    "CyclicLR_scale_fn": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4,
                                                  scale_fn=lambda x: 1 / (1 + x),
                                                  scale_mode="iterations"), "SGD"),
    "CyclicLR_adam": (lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, cycle_momentum=False),
                      "Adam"),
    "OneCycleLR": (lambda m, o: m.OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=STEPS), "SGD"),
    "OneCycleLR_three_phase_linear": (lambda m, o: m.OneCycleLR(
        o, max_lr=0.2, epochs=6, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, div_factor=10., final_div_factor=100.), "SGD"),
    "OneCycleLR_adam": (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 5,
                                                  base_momentum=0.8, max_momentum=[0.9, 0.95]),
                        "Adam"),
    "OneCycleLR_no_momentum": (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=STEPS,
                                                         cycle_momentum=False), "SGD"),
    "CosineAnnealingWarmRestarts": (lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001), "SGD"),
    "CosineAnnealingWarmRestarts_mult1": (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4),
                                          "SGD"),
    "SequentialLR": (lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)],
        milestones=[2]), "SGD"),
    "SequentialLR_three": (lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.StepLR(o, 2, 0.7),
            m.CosineAnnealingLR(o, T_max=6)], milestones=[5, 12]), "SGD"),
    "ChainedScheduler": (lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)]), "SGD"),
    "ChainedScheduler_three": (lambda m, o: m.ChainedScheduler(
        [m.LinearLR(o, start_factor=0.5, total_iters=6), m.MultiStepLR(o, [4, 9], 0.5),
         m.CosineAnnealingLR(o, T_max=10, eta_min=0.0001)]), "Adam"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sequence_matches_pytorch(name):
    make, kind = CASES[name]
    assert run(ember, make, kind) == run(torch, make, kind)


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_round_trip_matches_pytorch(name):
    make, kind = CASES[name]
    expected = run(torch, make, kind, reload_at=10)
    assert run(ember, make, kind, reload_at=10) == expected
    # Reloading changes nothing: the same sequence as a run without it.
    assert expected == run(torch, make, kind)


def plain(value):
    """A state_dict value with functions left out, for comparing ember's with torch's."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not callable(v)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value if not callable(v)]
    return value


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_layout_matches_pytorch(name):
    make, kind = CASES[name]
    states = []
    for lib in (ember, torch):
        opt = make_optimizer(lib, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = make(sched_module(lib), opt)
            for _ in range(7):
                opt.step()
                sched.step()
        state = sched.state_dict()
        # Torch 1.13's CyclicLR saves a weakref.WeakMethod, which cannot be pickled (torch 2.0
        # leaves it out, as ember does).
        state.pop("_scale_fn_ref", None)
        for inner in state.get("_schedulers", []):
            inner.pop("_scale_fn_ref", None)
        states.append(state)
    assert list(states[0]) == list(states[1])
    assert plain(states[0]) == plain(states[1])
    if "scale_fn" not in name:  # a user's lambda is saved as torch saves it, unpicklable
        pickle.loads(pickle.dumps(states[0]))


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
                                  "LambdaLR", "MultiplicativeLR", "CyclicLR_triangular"])
def test_step_with_epoch_matches_pytorch(name):
    """The deprecated step(epoch): the closed form where there is one, and a warning."""
    make, kind = CASES[name]
    epochs = [0, 3, 5, 4, 10, 11, 11, 2, 7, 20]
    assert (run(ember, make, kind, len(epochs), step_arg=epochs.__getitem__)
            == run(torch, make, kind, len(epochs), step_arg=epochs.__getitem__))
    opt = make_optimizer(ember, kind)
    sched = make(ember.optim.lr_scheduler, opt)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(3)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs(T_mult):
    iters = 7
    epochs = [e + i / iters for e in range(12) for i in range(iters)] + [26, 3.5, 0, 40.25]

    def make(m, o):
        return m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=T_mult, eta_min=0.005)

    got = run(ember, make, steps=len(epochs), step_arg=epochs.__getitem__)
    assert got == run(torch, make, steps=len(epochs), step_arg=epochs.__getitem__)
    # step() after step(26) goes on from 27, as torch's docstring says.
    for lib in (ember, torch):
        opt = make_optimizer(lib)
        s = make(sched_module(lib), opt)
        s.step(26)
        s.step()
        assert s.last_epoch == 27
    state = {}
    for lib in (ember, torch):
        opt = make_optimizer(lib)
        s = make(sched_module(lib), opt)
        s.step(9.5)
        state[lib] = (s.T_cur, s.T_i, s.last_epoch, s.get_last_lr())
    assert state[ember] == state[torch]


METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.899, 0.8999, 0.97, 0.5, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7,
           0.49, 0.49, 0.49, 0.49, 0.49, 0.49, 0.49, 0.49, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(patience=2),
    dict(mode="max", patience=1, factor=0.5),
    dict(patience=1, threshold=0.05, threshold_mode="abs"),
    dict(mode="max", patience=0, threshold=0.1, threshold_mode="abs", cooldown=2),
    dict(patience=1, cooldown=3, factor=0.2, min_lr=[0.005, 0.0009]),
    dict(patience=0, factor=0.5, min_lr=0.02, eps=1e-3),
    dict(mode="min", patience=1, threshold=0.1, threshold_mode="rel", cooldown=1),
])
def test_reduce_on_plateau_matches_pytorch(kwargs):
    def go(lib, reload_at=None):
        opt = make_optimizer(lib)
        m = sched_module(lib)
        s = m.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for i, metric in enumerate(METRICS):
            if i == reload_at:
                state = s.state_dict()
                opt2 = make_optimizer(lib)
                s = m.ReduceLROnPlateau(opt2, **kwargs)
                copy_hyperparameters(opt, opt2)
                s.load_state_dict(state)
                opt = opt2
            s.step(lib.tensor(metric) if i % 3 == 0 else metric)
            seq.append((record(opt), s.best, s.num_bad_epochs, s.cooldown_counter, s.last_epoch))
        return seq

    expected = go(torch)
    assert go(ember) == expected
    assert go(ember, reload_at=10) == go(torch, reload_at=10) == expected


def test_verbose_prints_as_pytorch(capsys):
    out = {}
    for lib in (ember, torch):
        opt = make_optimizer(lib)
        m = sched_module(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = m.StepLR(opt, 2, verbose=True)
            opt.step()
            s.step()
            s.step(5)
            s.step(7.5)
            p = m.ReduceLROnPlateau(opt, patience=0, verbose=True)
            p.step(1.0)
            p.step(2.0)
            p.step(3.0, epoch=4.0)
        out[lib] = capsys.readouterr().out
    assert out[ember] == out[torch]
    assert "Adjusting learning rate of group 0 to 1.0000e-01." in out[ember]


def test_call_order_warning():
    opt = make_optimizer(ember)
    s = ember.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        s.step()
    opt = make_optimizer(ember)
    s = ember.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
        s.step()
        ember.optim.lr_scheduler.ExponentialLR(opt, 0.9)  # a second scheduler: one wrapper
    assert opt._step_count == 0  # reset by each new scheduler, as torch
    opt.step()
    assert opt._step_count == 1
    opt = make_optimizer(ember)
    s = ember.optim.lr_scheduler.StepLR(opt, 2)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match="has been overridden after learning rate"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_optimizer_with_scheduler_pickles_and_copies():
    opt = StandInOptimizer([{"params": [], "lr": 0.5}], _DEFAULTS["SGD"])
    s = ember.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    for clone in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        assert clone.param_groups[0]["initial_lr"] == 0.5
        clone.step()
        clone.step()
        assert clone._step_count == 3 and opt._step_count == 1
    s2 = pickle.loads(pickle.dumps(s))
    s2.optimizer.step()
    s2.step()
    assert s2.get_last_lr() == [0.5] and s2.optimizer._step_count == 2


def test_lambda_state_dict_keeps_only_callable_objects():
    for lib in (ember, torch):
        opt = make_optimizer(lib)
        s = sched_module(lib).LambdaLR(opt, [lam_a, Halving(3)])
        state = s.state_dict()
        assert state["lr_lambdas"] == [None, {"every": 3}]
        state["lr_lambdas"][1] = {"every": 5}
        s.load_state_dict(state)
        assert s.lr_lambdas[1].every == 5 and "lr_lambdas" in state


def test_names():
    m = ember.optim.lr_scheduler
    assert m._LRScheduler is m.LRScheduler
    assert sorted(m.__all__) == sorted(torch.optim.lr_scheduler.__all__)
    for name in m.__all__:
        assert issubclass(getattr(m, name), m.LRScheduler) == issubclass(
            getattr(torch.optim.lr_scheduler, name), torch.optim.lr_scheduler._LRScheduler)


def _other(lib):
    return make_optimizer(lib)


BAD = [
    lambda m, o: m.ConstantLR(o, factor=1.5),
    lambda m, o: m.ConstantLR(o, factor=-0.1),
    lambda m, o: m.LinearLR(o, start_factor=-0.1),
    lambda m, o: m.LinearLR(o, end_factor=2),
    lambda m, o: m.LambdaLR(o, [lam_a]),
    lambda m, o: m.MultiplicativeLR(o, [lam_a, lam_a, lam_a]),
    lambda m, o: m.StepLR(o, 2, last_epoch=3),
    lambda m, o: m.StepLR([], 2),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[2, 4]),
    lambda m, o: m.ChainedScheduler([m.StepLR(o, 2), m.StepLR(_other(m._lib), 2)]),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(_other(m._lib), 3)], [2]),
    lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.ReduceLROnPlateau(o, mode="avg"),
    lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="pct"),
    lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda m, o: m.ReduceLROnPlateau("sgd"),
    lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="sawtooth"),
    lambda m, o: m.CyclicLR(o, [0.01, 0.02, 0.03], 0.1),
    lambda m, o: m.CyclicLR(o, 0.01, (0.1,)),
    lambda m, o: m.CyclicLR(o, 0.01, 0.1, max_momentum=[0.9]),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10.0),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=3),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=-3),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    lambda m, o: m.OneCycleLR(o, max_lr=[0.1], total_steps=10),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, base_momentum=[0.8, 0.8, 0.8]),
]


class _Namespace:
    def __init__(self, lib):
        self._lib = lib
        self.__dict__.update(vars(sched_module(lib)))


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_arguments_raise_as_pytorch(i):
    got = _outcome(lambda: BAD[i](_Namespace(ember), make_optimizer(ember)))
    assert got is not None
    assert got == _outcome(lambda: BAD[i](_Namespace(torch), make_optimizer(torch)))


def test_momentum_required_and_stepping_past_the_end():
    # Adam has no 'momentum' (CyclicLR needs it); the stand-in has neither momentum nor betas.
    for lib in (ember, torch):
        opt = make_optimizer(lib, "Adam")
        with pytest.raises(ValueError, match="optimizer must support momentum"):
            sched_module(lib).CyclicLR(opt, 0.01, 0.1)
    plain_opt = StandInOptimizer([{"params": [], "lr": 0.1}], {"lr": 0.1})
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        ember.optim.lr_scheduler.OneCycleLR(plain_opt, 0.1, total_steps=5)
    msgs = []
    for lib in (ember, torch):
        opt = make_optimizer(lib)
        s = sched_module(lib).OneCycleLR(opt, 0.1, total_steps=4)
        for _ in range(4):
            opt.step()
            s.step()
        with pytest.raises(ValueError) as e:
            s.step()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "Tried to step 6 times. The specified number of total steps is 4"


def test_state_dict_through_ember_save(tmp_path):
    """ember.save keeps a state's plain values as JSON (MultiStepLR's milestone epochs come back
    as strings): the schedule goes on as before."""
    def go(reload):
        opt = make_optimizer(ember)
        s = ember.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 6, 6], gamma=0.5)
        lrs = []
        for i in range(10):
            if reload and i == 2:
                ember.save({"scheduler": s.state_dict()}, str(tmp_path / "s.safetensors"))
                s.load_state_dict(ember.load(str(tmp_path / "s.safetensors"))["scheduler"])
            opt.step()
            s.step()
            lrs.append(s.get_last_lr())
        return lrs

    assert go(True) == go(False)
