"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum and
weight decay."""
from .. import _C
from .optimizer import Optimizer, required, _check, _step

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
    foreach=None, differentiable=False); state: 'momentum_buffer' per parameter."""

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        if lr is not required:
            _check(lr >= 0.0, "learning rate", lr)
        _check(momentum >= 0.0, "momentum value", momentum)
        _check(weight_decay >= 0.0, "weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            buffers = [self.state[p].get("momentum_buffer") for p in params]
            buffers = _C._optim.sgd(params, grads, buffers, lr=group["lr"],
                                    momentum=group["momentum"], dampening=group["dampening"],
                                    weight_decay=group["weight_decay"],
                                    nesterov=group["nesterov"], maximize=group["maximize"])
            for p, b in zip(params, buffers):
                self.state[p]["momentum_buffer"] = b
