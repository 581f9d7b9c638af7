"""ember.nn.utils: gradient clipping, parameters as one vector, and packed sequences (rnn)."""
import math

from ... import _C
from ...autograd import no_grad
from . import rnn  # noqa: F401
from ..._missing import missing

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "rnn"]


def _grads(parameters):
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients so that their joint norm is at most max_norm; returns the norm
    before clipping (a 0-dim tensor), as torch.nn.utils.clip_grad_norm_."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _C._ops.zeros(())
    with no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else _C._ops.stack(norms).max()
        else:
            total = _C._ops.norm(_C._ops.stack([_C._ops.norm(g.detach(), norm_type) for g in grads]),
                                 norm_type)
        if error_if_nonfinite and not bool(_C._ops.isfinite(total)):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               "`parameters` is non-finite, so it cannot be clipped. To disable "
                               "this error and scale the gradients by the non-finite norm anyway, "
                               "set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The deprecated name of clip_grad_norm_."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one vector."""
    return _C._ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n


__getattr__ = missing(__name__)
