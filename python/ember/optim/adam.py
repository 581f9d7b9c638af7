"""torch.optim's Adam family: Adam, AdamW, Adamax, NAdam and RAdam. Each keeps PyTorch's state
names ('step' a float32 scalar tensor, 'exp_avg', 'exp_avg_sq', ...), so state dicts move
between the two libraries."""
from .. import _C
from .. import tensor, zeros_like
from .optimizer import (Optimizer, _check, _check_adam_like, _maximize_and_decoupled_decay,
                        _step)

__all__ = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"]


def _state(optimizer, p, **tensors):
    """p's state, made on its first step: 'step' 0 and each named tensor (zeros like p unless
    given)."""
    state = optimizer.state[p]
    if len(state) == 0:
        state["step"] = tensor(0.0)
        for name, value in tensors.items():
            state[name] = zeros_like(p) if value is None else value
    return state


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    foreach=None, maximize=False, capturable=False, differentiable=False, fused=False)."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            amsgrad = group["amsgrad"]
            states = [_state(self, p, exp_avg=None, exp_avg_sq=None) for p in params]
            if amsgrad:
                for p, s in zip(params, states):
                    s.setdefault("max_exp_avg_sq", zeros_like(p))
            beta1, beta2 = group["betas"]
            _C._optim.adam(params, grads, [s["exp_avg"] for s in states],
                           [s["exp_avg_sq"] for s in states],
                           [s["max_exp_avg_sq"] for s in states] if amsgrad else [],
                           [s["step"] for s in states], amsgrad=amsgrad, beta1=beta1,
                           beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                           eps=group["eps"], maximize=group["maximize"],
                           decoupled_weight_decay=self._decoupled)


class AdamW(Adam):
    """AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False, foreach=None, capturable=False): Adam with decoupled weight decay."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)


class Adamax(Optimizer):
    """Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    maximize=False): Adam with the infinity norm."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            states = [_state(self, p, exp_avg=None, exp_inf=None) for p in params]
            beta1, beta2 = group["betas"]
            _C._optim.adamax(params, grads, [s["exp_avg"] for s in states],
                             [s["exp_inf"] for s in states], [s["step"] for s in states],
                             lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                             weight_decay=group["weight_decay"],
                             maximize=group.get("maximize", False))


class NAdam(Optimizer):
    """NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
    foreach=None, *, decoupled_weight_decay=False, maximize=False, capturable=False,
    differentiable=False): Adam with Nesterov momentum. PyTorch 1.13's positional arguments;
    PyTorch 2.x's decoupled_weight_decay and maximize, as keywords."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None, *, decoupled_weight_decay=False,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        _check(0.0 <= momentum_decay, "momentum_decay value", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            states = [_state(self, p, mu_product=tensor(1.0), exp_avg=None, exp_avg_sq=None)
                      for p in params]
            grads, weight_decay = _maximize_and_decoupled_decay(params, grads, group)
            beta1, beta2 = group["betas"]
            _C._optim.nadam(params, grads, [s["exp_avg"] for s in states],
                            [s["exp_avg_sq"] for s in states], [s["mu_product"] for s in states],
                            [s["step"] for s in states], lr=group["lr"], beta1=beta1,
                            beta2=beta2, eps=group["eps"], weight_decay=weight_decay,
                            momentum_decay=group["momentum_decay"])


class RAdam(Optimizer):
    """RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    decoupled_weight_decay=False, maximize=False, capturable=False, differentiable=False): Adam
    with its adaptive rate rectified while the variance estimate is unreliable. PyTorch 1.13's
    positional arguments; PyTorch 2.x's decoupled_weight_decay and maximize, as keywords."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, decoupled_weight_decay=False, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            states = [_state(self, p, exp_avg=None, exp_avg_sq=None) for p in params]
            grads, weight_decay = _maximize_and_decoupled_decay(params, grads, group)
            beta1, beta2 = group["betas"]
            _C._optim.radam(params, grads, [s["exp_avg"] for s in states],
                            [s["exp_avg_sq"] for s in states], [s["step"] for s in states],
                            lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                            weight_decay=weight_decay)


