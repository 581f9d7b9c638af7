"""ember.func: torch.func's transforms that programs call most, vmap, grad and grad_and_value
(torch.vmap is the same vmap).

vmap maps a function over a dimension of its inputs by calling it once per index and stacking
the results: the values are PyTorch's (its batching rules compute the same ops on the same slices;
reductions inside may round differently where PyTorch fuses the batch into one kernel), the speed
is a loop's. in_dims and out_dims follow PyTorch's rules (an int or None per input, nested as
the inputs are), and so do its errors; randomness="error" (the default) refuses a function that
draws random numbers, "different" draws each index's own, "same" draws one set for all.
"""
import functools

from . import _C
from .autograd import enable_grad, grad as _autograd_grad

__all__ = ["vmap", "grad", "grad_and_value"]


def _flatten(tree):
    """The tensors and other leaves of nested tuples, lists and dicts, and how to rebuild them."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(items, parts=parts, kind=type(tree)):
            out, at = [], 0
            for n, build in ((len(p[0]), p[1]) for p in parts):
                out.append(build(items[at:at + n]))
                at += n
            return kind(out) if kind in (tuple, list) else kind(*out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, build = _flatten([tree[k] for k in keys])
        return leaves, lambda items: dict(zip(keys, build(items)))
    return [tree], lambda items: items[0]


def _broadcast_dims(dims, tree, name):
    """dims given for tree (an int/None for a whole subtree, else the same nesting) per leaf."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(dims) != len(tree):
            raise ValueError(f"vmap(func, {name}={dims}, ...): {name} is not compatible with the "
                             f"structure of `inputs`. {name} has {len(dims)} elements but "
                             f"inputs has {len(tree)}")
        return [d for sub, t in zip(dims, tree) for d in _broadcast_dims(sub, t, name)]
    if isinstance(dims, dict) and isinstance(tree, dict):
        return [d for k in tree for d in _broadcast_dims(dims[k], tree[k], name)]
    raise ValueError(f"vmap(func, {name}={dims}, ...): expected {name} to be an int, None or a "
                     f"structure matching the inputs, got {type(dims).__name__}")


def _rng_state():
    return _C.default_generator.get_state()


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its inputs; its outputs stacked at out_dims."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        name = getattr(func, "__name__", repr(func))
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected "
                             f"`in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        leaves, rebuild = _flatten(args)
        dims = _broadcast_dims(in_dims, args, "in_dims")
        sizes = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(leaf, _C.Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for an input but the input is of type "
                                 f"{type(leaf)}. We cannot vmap over non-Tensor arguments, "
                                 f"please use None as the respective in_dim")
            if not -leaf.dim() <= d < leaf.dim():
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {leaf.dim()} so expected in_dim to satisfy "
                                 f"-{leaf.dim()} <= in_dim < {leaf.dim()}.")
            sizes.append(leaf.shape[d])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one "
                             f"input must be a Tensor mapped over (not every in_dim None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        outs = []
        start = _rng_state() if randomness != "different" else None
        for i in range(sizes[0]):
            if randomness == "same":
                _C.default_generator.set_state(start)
            sliced = [leaf.select(d, i) if d is not None else leaf
                      for leaf, d in zip(leaves, dims)]
            outs.append(func(*rebuild(sliced), **kwargs))
            if randomness == "error" and not _C.default_generator.get_state().equal(start):
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack(outs, out_dims, name)

    return mapped


def _stack(outs, out_dims, name):
    first, rebuild = _flatten(outs[0])
    columns = [_flatten(o)[0] for o in outs]
    dims = _broadcast_dims(out_dims, outs[0], "out_dims")
    stacked = []
    for k, d in enumerate(dims):
        items = [c[k] for c in columns]
        if not isinstance(items[0], _C.Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(items[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        if d is None:
            stacked.append(items[0])
        else:
            stacked.append(_C._ops.stack(items, d))
    return rebuild(stacked)


_depth = 0  # how many grad transforms the caller runs inside


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func's scalar output with respect to args[argnums], func's output)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        global _depth
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        args = list(args)
        for n in nums:
            if not isinstance(args[n], _C.Tensor):
                raise RuntimeError(f"grad(f)(*args): Expected f to be a function that takes a "
                                   f"Tensor at argnums={argnums}, got {type(args[n])}")
            # Inside another grad transform an input that requires grad is the outer one's
            # variable: differentiated through as it is, so the outer transform sees this one.
            if _depth == 0 or not args[n].requires_grad:
                args[n] = args[n].detach().requires_grad_()
        _depth += 1
        try:
            with enable_grad():
                out = func(*args, **kwargs)
                value, aux = (out if has_aux else (out, None))
                if not isinstance(value, _C.Tensor) or value.numel() != 1:
                    raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                       "scalar Tensor, got tensor with "
                                       f"{getattr(value, 'dim', lambda: '?')()} dims. Maybe you "
                                       "wanted to use the vjp or jacrev APIs instead?")
                grads = _autograd_grad(value, [args[n] for n in nums], create_graph=True,
                                       allow_unused=True)
        finally:
            _depth -= 1
        grads = [g if g is not None else _C._ops.zeros_like(args[n])
                 for g, n in zip(grads, nums)]
        if _depth == 0:
            grads = [g.detach() for g in grads]
            value = value.detach()
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output with respect to args[argnums] (with aux: (grad,
    aux))."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper
