"""Reductions and scans: moments, nan-reductions, cumulative extremes, diff, trapezoid, cov. Part of
ember._compat (see its __init__)."""
import builtins
import warnings

from ._registry import _both, _dname, _floating, _is_tensor, _out, _torch

_E = None  # the ember module, set by install()


# ================================================================================================
# reductions and scans
# ================================================================================================



def _mean_of(input, dim, keepdim):
    return input.mean() if dim is None else input.mean(dim, keepdim)


def _moments(fn_name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, builtins.bool):  # std_mean(x, False): the unbiased overload
        dim, unbiased = None, dim
    kwargs = {}
    if correction is not None:
        kwargs["correction"] = correction
    elif unbiased is not None:
        kwargs["unbiased"] = unbiased
    fn = getattr(_E, fn_name)
    if dim is None and not keepdim:
        spread = fn(input, **kwargs)
    else:
        spread = fn(input, dim if dim is not None else list(range(input.dim())), keepdim=keepdim,
                    **kwargs)
    mean = _mean_of(input, dim if dim is not None else list(range(input.dim())), keepdim)
    return spread, mean


@_torch
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) of input over dim, in one call."""
    return _moments("std", input, dim, unbiased, keepdim, correction)


@_torch
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) of input over dim, in one call."""
    return _moments("var", input, dim, unbiased, keepdim, correction)


@_both
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) of input over dim (over all elements when None)."""
    if input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    dims = list(range(input.dim())) if dim is None else dim
    if dim is None and not keepdim:
        return _E.return_types.aminmax(input.amin(dims).reshape(()), input.amax(dims).reshape(()))
    return _E.return_types.aminmax(input.amin(dims, keepdim), input.amax(dims, keepdim))


@_both
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over dim with NaNs counted as zero."""
    x = _E.where(_E.isnan(input), _E.zeros_like(input), input) if input.is_floating_point() \
        else input
    if dim is None:
        out = x.sum(dtype=dtype) if dtype is not None else x.sum()
        return out.reshape((1,) * input.dim()) if keepdim else out
    return x.sum(dim, keepdim, dtype=dtype) if dtype is not None else x.sum(dim, keepdim)


@_both
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over dim of the elements that are not NaN."""
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{_legacy(input.dtype)}")
    keep = ~_E.isnan(input)
    return nansum(input, dim, keepdim, dtype=dtype) / nansum(keep, dim, keepdim).to(
        dtype or input.dtype)


def _legacy(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool"}[_dname(dtype)]


def _scan(x, dim, combine):
    """Inclusive scan of x along dim with an associative combine(earlier, later), in log2(n)
    steps of whole-tensor ops (Hillis-Steele)."""
    n, shift = x.shape[dim], 1
    while shift < n:
        head = x.narrow(dim, 0, shift)
        tail = combine(x.narrow(dim, 0, n - shift), x.narrow(dim, shift, n - shift))
        x = _E.cat([head, tail], dim)
        shift *= 2
    return x


def _logaddexp(a, b):
    # Not ember.logaddexp: log(exp(-inf) + exp(-inf)) must be -inf, not NaN.
    m = _E.maximum(a, b).detach()
    m = _E.where(_E.isfinite(m), m, _E.zeros_like(m))
    return m + _E.log(_E.exp(a - m) + _E.exp(b - m))


@_both
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along dim, without overflow."""
    if not input.is_floating_point():
        raise RuntimeError(f"\"logcumsumexp_out_cpu\" not implemented for '{_legacy(input.dtype)}'")
    if input.dim() == 0:
        return _out(input.clone(), out)
    return _out(_scan(input, dim, _logaddexp), out)


def _cum_extreme(input, dim, pick_later, kind):
    """The running extreme along dim: _scan's steps on (value, index) pairs."""
    if input.dim() == 0:
        return kind(input.clone(), _E.zeros((), dtype=_E.int64, device=input.device))
    shape = [1] * input.dim()
    shape[dim] = input.shape[dim]
    ids = _E.arange(input.shape[dim], device=input.device).reshape(shape).expand(input.shape)
    vals, ids, n, s = input, ids.contiguous(), input.shape[dim], 1
    while s < n:
        v1, v2 = vals.narrow(dim, 0, n - s), vals.narrow(dim, s, n - s)
        take = pick_later(v1, v2)
        v = _E.where(take, v2, v1)
        i = _E.where(take, ids.narrow(dim, s, n - s), ids.narrow(dim, 0, n - s))
        vals = _E.cat([vals.narrow(dim, 0, s), v], dim)
        ids = _E.cat([ids.narrow(dim, 0, s), i], dim)
        s *= 2
    return kind(vals, ids)


def _nan(x):
    return _E.isnan(x) if x.is_floating_point() else _E.zeros_like(x, dtype=_E.bool)


@_both
def cummax(input, dim):
    """(values, indices) of the running maximum along dim; ties and NaNs take the later index."""
    return _cum_extreme(input, dim, lambda a, b: (b >= a) | _nan(b), _E.return_types.cummax)


@_both
def cummin(input, dim):
    """(values, indices) of the running minimum along dim; ties and NaNs take the later index."""
    return _cum_extreme(input, dim, lambda a, b: (b <= a) | _nan(b), _E.return_types.cummin)


@_both
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (x[i+1] - x[i]; != for bool)."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    parts = [p for p in (prepend, input, append) if p is not None]
    for p in parts:
        if p.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    x = _E.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        a, b = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = (a != b) if _dname(x.dtype) == "bool" else a - b
    return x


def _trapezoid_parts(y, x, dx, dim):
    y = _floating(y)
    n = y.shape[dim]
    if n == 0:
        return y, None
    if x is not None:
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[dim] = x.shape[0]
            x = x.reshape(shape)
        return y, diff(x, dim=dim).to(y.dtype) if not x.is_floating_point() else diff(x, dim=dim)
    return y, 1.0 if dx is None else dx


@_torch
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule's integral of y along dim, over x's points or a spacing dx."""
    y, step = _trapezoid_parts(y, x, dx, dim)
    if step is None:
        return y.sum(dim)
    n = y.shape[dim]
    mid = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * step
    return mid.sum(dim) / 2


@_torch
def trapz(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule (the old name of trapezoid)."""
    return trapezoid(y, x, dx=dx, dim=dim)


@_torch
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal-rule integral of y along dim."""
    y, step = _trapezoid_parts(y, x, dx, dim)
    n = y.shape[dim]
    if step is None or n == 0:
        return y.narrow(dim, 0, 0) if n == 0 else y
    mid = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * step
    return _E.cumsum(mid, dim) / 2


@_both
def trace(input):
    """The sum of a matrix's diagonal."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


@_both
def dist(input, other, p=2):
    """The p-norm of input - other."""
    return _E.norm((input - other).reshape(-1), p)


@_both
def renorm(input, p, dim, maxnorm):
    """input with each slice along dim rescaled to p-norm at most maxnorm."""
    dims = [d for d in range(input.dim()) if d != dim % input.dim()]
    norms = _E.norm(input, p, dim=dims, keepdim=True)
    scale = _E.where(norms > maxnorm, maxnorm / (norms + 1e-7), _E.ones_like(norms))
    return input * scale


@_both
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of input's rows (variables) over its columns (observations)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = _floating(input).reshape(1, -1) if input.dim() < 2 else _floating(input)
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg, w_sum = x.mean(1), x.shape[1]
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    xc = x - avg.unsqueeze(1)
    c = xc.mm((xc * w if w is not None else xc).t())
    if _is_tensor(norm):
        norm = _E.clamp(norm, min=0)
    elif norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0")
        norm = 0
    return (c / norm).squeeze()


@_both
def corrcoef(input):
    """The Pearson correlation matrix of input's rows."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = _E.sqrt(c.diagonal())
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    return _E.clamp(c, -1, 1)
