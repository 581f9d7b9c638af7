"""torch.nn.utils.clip_grad: clipping gradients by their joint norm or by value, and (PyTorch
2.6) the two halves of clip_grad_norm_, get_total_norm and clip_grads_with_norm_. `foreach` is
accepted and has no effect (each tensor is one C++ call)."""
import math
import types
import warnings

from ... import _C
from ...autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


# Resolvers of parameters sharded across ranks (FSDP2's fully_shard registers one): each maps a
# parameter to the function that sums, or takes the maximum of, a norm's pieces over the ranks
# holding that parameter (reduce(tensor, "sum" | "max") in place), or to None. clip_grad_norm_
# then clips by the norm of the whole parameters, as PyTorch's DTensor gradients give it.
_shard_resolvers = []


def _sharded_norm(parameters, norm_type):
    """The joint norm of the parameters' gradients when some are shards; None when none is."""
    plain, pieces = [], {}
    for p in parameters:
        if p.grad is None:
            continue
        reduce = next((r for r in (f(p) for f in _shard_resolvers) if r is not None), None)
        if reduce is None:
            plain.append(p.grad)
        else:
            pieces.setdefault(reduce, []).append(p.grad)
    if not pieces:
        return None
    inf = norm_type == math.inf
    with no_grad():
        parts = [get_total_norm(plain, norm_type).double()] if plain else []
        for reduce, grads in pieces.items():
            local = get_total_norm(grads, norm_type).double()
            local = local if inf else local ** norm_type
            local = local.reshape(1).clone()
            reduce(local, "max" if inf else "sum")
            parts.append(local[0] if inf else local[0] ** (1.0 / norm_type))
        total = _C._ops.stack(parts).max() if inf else _C._ops.norm(_C._ops.stack(parts),
                                                                      norm_type)
    return total.to(pieces[next(iter(pieces))][0].dtype)


def _as_list(tensors):
    return [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm_type-norm of the tensors taken together as one vector (the norm of their
    norms); a 0-dim tensor, 0 for no tensors."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _C._ops.zeros(())
    device = tensors[0].device
    with no_grad():
        if norm_type == math.inf:
            norms = [t.detach().abs().max().to(device) for t in tensors]
            total = norms[0] if len(norms) == 1 else _C._ops.stack(norms).max()
        else:
            total = _C._ops.norm(_C._ops.stack([_C._ops.norm(t.detach(), norm_type).to(device)
                                                for t in tensors]), norm_type)
    if error_if_nonfinite and not bool(_C._ops.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the parameters' gradients in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with no_grad():
        # Multiplying by a coefficient clamped to 1 rather than testing it keeps the gradients
        # on their device (no synchronisation to read the test's result).
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.detach().mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients so that their joint norm is at most max_norm; returns the norm
    before clipping (a 0-dim tensor)."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is read twice below
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _sharded_norm(parameters, float(norm_type)) if _shard_resolvers else None
    if total_norm is None:
        total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The deprecated name of clip_grad_norm_."""
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor "
                  "of torch.nn.utils.clip_grad_norm_.", stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
