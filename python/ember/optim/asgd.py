"""torch.optim.ASGD: averaged stochastic gradient descent (Polyak and Juditsky). PyTorch's state
('step', 'eta' and 'mu' float32 scalar tensors, 'ax' the running average of the parameter) and
PyTorch's single-tensor update, operation for operation, in Python over ember's ops."""
import math

from .. import tensor, zeros_like
from .optimizer import Optimizer, _check, _step

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
    maximize=False, differentiable=False, capturable=False); the average of the iterates is in
    optimizer.state[p]['ax']."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check(0.0 <= lr, "learning rate", lr)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    @_step
    def step(self):
        for group in self.param_groups:
            lambd, lr, t0, alpha = group["lambd"], group["lr"], group["t0"], group["alpha"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            params, grads = self._grads(group)
            for p, grad in zip(params, grads):
                state = self.state[p]
                if len(state) == 0:
                    # torch.tensor(lr): float32, so eta.item() is lr rounded to float32 as in
                    # PyTorch.
                    state["step"] = tensor(0.0)
                    state["eta"] = tensor(lr)
                    state["mu"] = tensor(1.0)
                    state["ax"] = zeros_like(p)
                step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
                if maximize:
                    grad = -grad
                step_t.add_(1)
                step = step_t.item()
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                p.mul_(1 - lambd * eta.item())  # decay term
                p.add_(grad, alpha=-eta.item())
                if mu.item() != 1:  # averaging starts once step > t0
                    ax.add_(p.sub(ax).mul(mu))
                else:
                    ax.copy_(p)
                eta.copy_(tensor(lr / math.pow((1 + lambd * lr * step), alpha)))
                mu.copy_(tensor(1 / max(1, step - t0)))
