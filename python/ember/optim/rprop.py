"""torch.optim.Rprop: resilient backpropagation, a step size per element that grows while the
gradient keeps its sign and shrinks when it flips. PyTorch's state ('step' an int, 'prev' the
last gradient used, 'step_size') and PyTorch's single-tensor update, in Python over ember's ops."""
from .. import full_like, where, zeros_like
from .optimizer import Optimizer, _check, _step

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
    maximize=False, *, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
                 maximize=False, *, differentiable=False, capturable=False):
        _check(0.0 <= lr, "learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError("Invalid eta values: {}, {}".format(etas[0], etas[1]))
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            params, grads = self._grads(group)
            for p, grad in zip(params, grads):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(grad, group["lr"])
                state["step"] += 1
                prev, step_size = state["prev"], state["step_size"]
                if group["maximize"]:
                    grad = -grad
                # PyTorch assigns through masks in this order: sign > 0 -> etaplus, then
                # sign < 0 -> etaminus, then sign == 0 -> 1 (a NaN sign stays NaN).
                sign = grad.mul(prev).sign()
                sign = where(sign.gt(0), etaplus,
                             where(sign.lt(0), etaminus, where(sign.eq(0), 1.0, sign)))
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                # Where the gradient changed sign there is no step, and the next step treats it
                # as zero (prev = 0).
                grad = where(sign.eq(etaminus), 0.0, grad)
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
