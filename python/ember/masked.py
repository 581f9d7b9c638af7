"""torch.masked: reductions and normalisations that see only the elements where `mask` is True
(strided tensors). Each replaces the masked-out elements by the identity of its reduction (0 for
sums, 1 for products, -inf for maxima, ...) and runs the ordinary op; where no identity exists
(mean, var, std, median) a fully masked-out slice gives NaN, as PyTorch's. Like PyTorch's own
torch.masked, these are compositions of ops, written once here over ember's C++ ops."""
import math

import ember

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _name(dtype):
    return str(dtype).rpartition(".")[2]


def _identity(op, input, ord=None):
    """The value a masked-out element takes for `op`, as a 0-dim tensor of input's dtype."""
    dtype, name = input.dtype, _name(input.dtype)
    floating = input.is_floating_point()

    def const(v, dt=dtype):
        return ember.tensor(v, dtype=dt, device=input.device)
    if op in ("sum", "cumsum"):
        return const(0)
    if op in ("prod", "cumprod"):
        return const(1)
    if op in ("amax", "argmax", "logsumexp"):
        return const(-math.inf) if floating else const(ember.iinfo(dtype).min)
    if op in ("amin", "argmin"):
        return const(math.inf) if floating else const(ember.iinfo(dtype).max)
    if op == "norm":
        return const(math.inf) if ord == -math.inf else const(0)
    if op == "median":
        return const(math.nan, dtype if floating else ember.float32)
    raise NotImplementedError(f"identity of {op} on {name} input")


def _dims(dim, ndim):
    """dim as a sorted tuple of non-negative dims (all for None or ())."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _mask(input, mask):
    """mask broadcast to input's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = ember.broadcast_to(mask.clone(), tuple(input.shape))
    return mask.to(ember.bool)


def _combine(op, input, mask, ord=None):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    return ember.where(_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return ember.int64 if _name(input.dtype) in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dims = _dims(dim, input.dim())
    return ember.sum(_combine("sum", input, mask), list(dims), bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    result = _combine("prod", input, mask).to(dtype)
    for d in reversed(_dims(dim, input.dim())):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return ember.cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return ember.cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amax", input, mask)
    return ember.amax(x, list(_dims(dim, x.dim())), bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amin", input, mask)
    return ember.amin(x, list(_dims(dim, x.dim())), bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def _count(input, dim, keepdim, mask):
    """How many elements each slice keeps (int64)."""
    ones = ember.ones(tuple(input.shape), dtype=ember.int64, device=input.device)
    return sum(ones, dim, keepdim=keepdim, mask=None if mask is None else _mask(input, mask))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    inmask = None if mask is None else _mask(input, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / _count(input, dim, keepdim, inmask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    floating = input.is_floating_point()
    if not floating:
        input = input.to(ember.float32)
    out = ember.nanmedian(_combine("median", input, mask), d, keepdim).values
    if floating:
        return out
    if bool(ember.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dims = _dims(dim, input.dim())
    return ember.logsumexp(_combine("logsumexp", input, mask), list(dims),
                           keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.logaddexp(_combine("logsumexp", input, input_mask),
                           _combine("logsumexp", other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("norm", input, mask, ord)
    return ember.linalg.vector_norm(x, ord, list(_dims(dim, input.dim())), bool(keepdim),
                                    dtype=dtype)


def _std_var(input, dim, unbiased, keepdim, dtype, mask, take_sqrt):
    if dtype is None:
        dtype = input.dtype if input.is_floating_point() or input.is_complex() else ember.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else ember.float32
    inmask = None if mask is None else _mask(input, mask)
    count = _count(input, dim, True, inmask)
    centered = input - sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    total = sum(centered * centered.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if unbiased:
        count = ember.maximum(count - 1, ember.zeros_like(count))
    out = (total / count).to(dtype)
    return ember.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return ember.nn.functional.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return ember.nn.functional.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return ember.nn.functional.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ember.maximum(nrm, ember.full((), eps, dtype=nrm.dtype, device=nrm.device))
    return _combine("sum", input, mask) / denom


_REDUCTIONS = {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var",
               "std", "logsumexp"}
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _output_mask(op, input, *args, **kwargs):
    """Where op's result holds a value computed from some masked-in element (as PyTorch's)."""
    name = op.__name__
    if name in _REDUCTIONS:
        if name == "norm" and args:
            args = args[1:]  # ord
        dim = args[0] if args else kwargs.get("dim")
        outmask = _mask(input, kwargs.get("mask"))
        dims = _dims(dim, input.dim())
        out = outmask
        for d in reversed(dims):
            out = out.any(d, keepdim=bool(kwargs.get("keepdim", False)))
        return out
    if name in _NORMALIZATIONS:
        return _mask(input, kwargs.get("mask"))
    raise ValueError(f"expected masked operation, got {name}")


def _input_mask(input, *args, **kwargs):
    """The canonical input mask: kwargs' mask broadcast to input's shape, as bool (PyTorch's
    masked tests build their expected counts from it)."""
    return _mask(input, kwargs.get("mask"))
