"""torch.optim.Adafactor (PyTorch 2.6; Shazeer and Stern 2018): Adam's second moment kept as a
row and a column factor for every matrix (O(m + n) memory, not O(m n)), a relative step size
min(lr, 1/sqrt(t)) scaled by the parameter's RMS, and update clipping. PyTorch's state ('step' a
float32 scalar tensor, 'row_var' and 'col_var' for tensors of 2 or more dims, 'variance' for the
rest) and PyTorch's single-tensor update, operation for operation, in Python over ember's ops."""
import ember
from .. import _C, tensor, zeros_like
from .optimizer import Optimizer, _step

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
    *, foreach=None, maximize=False): eps is (epsilon1, the floor of the variance estimate,
    None for the parameter dtype's machine epsilon; epsilon2, the floor of the parameter RMS
    that scales the step); d the clipping threshold of the update's RMS."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, _C.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], _C.Tensor):
                    p_state["step"] = tensor(float(p_state["step"]))

    def _init_state(self, p):
        state = self.state[p]
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        if getattr(p.grad, "is_sparse", False):
            raise RuntimeError("Adafactor does not support sparse gradients")
        if len(state) == 0:
            state["step"] = tensor(0.0)
            if p.grad.dim() > 1:
                # The factors are the gradient's shape with the last (rows) or the
                # second-to-last (columns) dim reduced to 1.
                row_shape = list(p.grad.shape)
                row_shape[-1] = 1
                state["row_var"] = p.grad.new_zeros(row_shape)
                col_shape = list(p.grad.shape)
                col_shape[-2] = 1
                state["col_var"] = p.grad.new_zeros(col_shape)
            else:
                state["variance"] = zeros_like(p.grad)
        return state

    @_step
    def step(self):
        for group in self.param_groups:
            params, grads = self._grads(group)
            states = [self._init_state(p) for p in params]
            lr, d = group["lr"], group["d"]
            if isinstance(lr, _C.Tensor):
                lr = lr.item()
            beta2_decay, weight_decay = group["beta2_decay"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p, grad, state in zip(params, grads, states):
                if group["maximize"]:
                    grad = -grad
                # As PyTorch: the first parameter's dtype sets epsilon1 for the whole group.
                if eps1 is None:
                    eps1 = ember.finfo(p.dtype).eps
                state["step"] += 1
                step = state["step"].item()
                one_minus_beta2_t = step ** beta2_decay
                rho_t = min(lr, 1 / (step ** 0.5))
                alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    # (g * g).mean over a dim, as PyTorch computes it: the norm squared.
                    row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
                    row_var.lerp_(row_mean, one_minus_beta2_t)
                    col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
                    col_var.lerp_(col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    variance.lerp_(grad * grad, one_minus_beta2_t)
                    var_estimate = variance.clone()
                # eps1 squared: the square root is taken after.
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                p.add_(update, alpha=-alpha / denom)
