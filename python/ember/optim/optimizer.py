"""The optimizer base, PyTorch's layout: `param_groups` is a list of dicts (the parameters under
'params', every option under its name, any extra key a user adds), `state` maps each parameter to
a dict of its state, and `state_dict()` / `load_state_dict()` use torch.optim's dict, so a state
saved by PyTorch loads here and back. Subclass it in Python as in PyTorch; ember's optimizers
step through C++ (ember._C._optim), one call per parameter group.
"""
import functools
from collections import defaultdict
from copy import deepcopy
from itertools import chain

from .. import _C
from ..autograd import no_grad, enable_grad

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """The default of an option every group must give (SGD's lr in PyTorch 1.13)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(x):
    return type(x).__module__ + "." + type(x).__qualname__


class Optimizer:
    """Base of every optimizer: params is an iterable of tensors or of dicts (parameter groups,
    each with its own options); defaults fill the options a group leaves out."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        self._hook_for_profile()

    def _hook_for_profile(self):
        """As PyTorch: the class's step is wrapped once, so that a profile records every step as
        "Optimizer.step#<class>.step" (nothing is recorded, and little done, without one)."""
        cls = self.__class__
        if getattr(cls.step, "hooked", False):
            return

        def profile_hook_step(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                if not _C._profiler.is_recording():
                    return func(*args, **kwargs)
                r = _C._profiler.UserRange(f"Optimizer.step#{type(args[0]).__name__}.step")
                r.enter()
                try:
                    return func(*args, **kwargs)
                finally:
                    r.exit()
            return wrapper

        cls.step = profile_hook_step(cls.step)
        cls.step.hooked = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group):
        """Adds a group of parameters with its own options (fine-tuning unfrozen layers)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, _C.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, _C.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            param_group.setdefault(name, default)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=False):
        """Zeroes every parameter's gradient, or drops it (set_to_none=True)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Updates the parameters (a subclass's job)."""
        raise NotImplementedError

    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}: the
        parameters numbered across groups in order, as torch.optim's."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, _C.Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores state_dict(): group and parameter counts must match; tensors move to their
        parameter's device and (floating state) dtype, the step counts stay as saved."""
        state_dict = deepcopy(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(self.param_groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in self.param_groups)))

        def cast(param, value, key=None):
            if isinstance(value, _C.Tensor):
                if key != "step":
                    if param.is_floating_point():
                        value = value.to(param.dtype)
                    value = value.to(param.device)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        groups = []
        for g, saved in zip(self.param_groups, saved_groups):
            saved["params"] = g["params"]
            groups.append(saved)
        self.__setstate__({"state": state, "param_groups": groups})

    def _grads(self, group):
        """The parameters of a group that have a gradient, and their gradients."""
        params = [p for p in group["params"] if p.grad is not None]
        return params, [p.grad for p in params]


def _step(update):
    """step(closure=None) of an optimizer whose `update` steps every group: the closure (if any)
    re-evaluates the loss with gradients on, the update runs without them."""
    @functools.wraps(update)
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            update(self)
        return loss
    del step.__wrapped__  # inspect.signature shows step(self, closure=None)
    return step


def _check(ok, what, value):
    """PyTorch's ValueError for an option out of range: 'Invalid <what>: <value>'."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_adam_like(lr, eps, betas, weight_decay):
    _check(0.0 <= lr, "learning rate", lr)
    _check(0.0 <= eps, "epsilon value", eps)
    _check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    _check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])
    _check(0.0 <= weight_decay, "weight_decay value", weight_decay)


def _maximize_and_decoupled_decay(params, grads, group):
    """The start of PyTorch 2.x's NAdam and RAdam updates, for the C++ steps that lack them: the
    gradients negated when maximizing, and with decoupled_weight_decay the parameters scaled by
    1 - lr * weight_decay in place of the L2 term. Returns the gradients and the weight decay
    the C++ step is to apply."""
    if group.get("maximize", False):
        grads = [-g for g in grads]
    weight_decay = group["weight_decay"]
    if group.get("decoupled_weight_decay", False) and weight_decay != 0:
        for p in params:
            p.mul_(1 - group["lr"] * weight_decay)
        weight_decay = 0
    return grads, weight_decay
