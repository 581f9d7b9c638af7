"""torch.optim's RMSprop, Adagrad and Adadelta: steps scaled by running sums or averages of the
squared gradients. PyTorch's state names and types ('step' an int for RMSprop and Adadelta, a
float32 scalar tensor for Adagrad)."""
from .. import _C
from .. import full_like, tensor, zeros_like
from .optimizer import Optimizer, _check, _step

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
    foreach=None, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= momentum, "momentum value", momentum)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= alpha, "alpha value", alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            momentum, centered = group["momentum"], group["centered"]
            square_avgs, grad_avgs, buffers = [], [], []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        state["grad_avg"] = zeros_like(p)
                state["step"] += 1
                square_avgs.append(state["square_avg"])
                if momentum > 0:
                    buffers.append(state["momentum_buffer"])
                if centered:
                    grad_avgs.append(state["grad_avg"])
            _C._optim.rmsprop(params, grads, square_avgs, grad_avgs, buffers, lr=group["lr"],
                              alpha=group["alpha"], eps=group["eps"],
                              weight_decay=group["weight_decay"], momentum=momentum,
                              centered=centered, maximize=group["maximize"])


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= lr_decay, "lr_decay value", lr_decay)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= initial_accumulator_value, "initial_accumulator_value value",
               initial_accumulator_value)
        _check(0.0 <= eps, "epsilon value", eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize))
        # As PyTorch, the state exists from the start.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0)
                state["sum"] = full_like(p, initial_accumulator_value)

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            states = [self.state[p] for p in params]
            _C._optim.adagrad(params, grads, [s["sum"] for s in states],
                              [s["step"] for s in states], lr=group["lr"],
                              weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                              eps=group["eps"], maximize=group["maximize"])


class Adadelta(Optimizer):
    """Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    maximize=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= rho <= 1.0, "rho value", rho)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach))

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            square_avgs, acc_deltas = [], []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                state["step"] += 1
                square_avgs.append(state["square_avg"])
                acc_deltas.append(state["acc_delta"])
            _C._optim.adadelta(params, grads, square_avgs, acc_deltas, lr=group["lr"],
                               rho=group["rho"], eps=group["eps"],
                               weight_decay=group["weight_decay"], maximize=group["maximize"])
