"""Reductions and scans: moments, nan-reductions, cumulative extremes, diff, trapezoid, cov. Part of
ember._compat (see its __init__)."""
import builtins
import math
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
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}[_dname(dtype)]


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
    if _dname(input.dtype) in ("float16", "bfloat16"):  # accumulated in float32, as PyTorch's
        return _out(_scan(input.float(), dim, _logaddexp).to(input.dtype), out)
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


def _trapezoid_spacing(y, x, dim, name):
    """x's spacings along dim, a 1-D x viewed along y's dim (PyTorch broadcasts x, not dx)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


# The trapezoidal rules in PyTorch's order of operations, integer inputs computed (and wrapping)
# in their own dtype until the division by 2.


@_torch
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule's integral of y along dim, over x's points or a spacing dx."""
    dim = dim % max(y.dim(), 1)
    n = y.shape[dim]
    if n == 0:
        return _E.zeros_like(y.sum(dim), dtype=_E.get_default_dtype()
                             if not y.is_floating_point() else y.dtype)
    if x is not None:
        step = _trapezoid_spacing(y, x, dim, "trapezoid")
        return ((step * (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1))) / 2.0).sum(dim)
    dx = 1 if dx is None else dx
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx


@_torch
def trapz(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule (the old name of trapezoid)."""
    return trapezoid(y, x, dx=dx, dim=dim)


@_torch
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal-rule integral of y along dim."""
    dim = dim % max(y.dim(), 1)
    n = y.shape[dim]
    if n == 0:
        return _E.cumsum(y * 0.5, dim)
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if x is not None:
        return _E.cumsum(_trapezoid_spacing(y, x, dim, "cumulative_trapezoid") * pairs / 2.0, dim)
    return _E.cumsum((1 if dx is None else dx) / 2.0 * pairs, dim)


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
    if _dname(input.dtype) in ("float16", "bfloat16"):  # norms and scales in float32, as PyTorch's
        return renorm(input.float(), p, dim, maxnorm).to(input.dtype)
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
    if aweights is not None and aweights.is_floating_point():
        x = x.to(_E.promote_types(x.dtype, aweights.dtype))  # as x * aweights promotes
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg, w_sum = x.mean(1), x.shape[1]
    else:
        w = w.to(x.dtype.to_real())  # real weights, as PyTorch's (a complex x stays complex)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    xc = x - avg.unsqueeze(1)
    c = xc.mm((xc * w if w is not None else xc).t().conj())
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
    d = _E.sqrt(c.diagonal().real)
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    if c.is_complex():  # each part clipped, as PyTorch's
        return _E.complex(_E.clamp(c.real, -1, 1), _E.clamp(c.imag, -1, 1))
    return _E.clamp(c, -1, 1)


# --- order statistics made of sort (CPU's unstable sort has PyTorch's tie order: their indices
# are PyTorch's) ---------------------------------------------------------------------------------

def _along(input, dim):
    """(input with dim last, dim): a flattened input when dim is None."""
    if dim is None:
        return input.reshape(-1), -1
    return input, dim


@_both
def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values (NaN where all are NaN); with dim, (values,
    indices), equal values ordered by index as PyTorch's."""
    if dim is None:
        if input.numel() == 0:
            return _E.full((), float("nan"), dtype=input.dtype, device=input.device)
        return nanmedian(input.reshape(-1), 0).values
    x = input if input.dim() else input.reshape(1)
    d = dim if input.dim() else 0
    values, indices = _E.sort(x, d, stable=True)  # NaN last
    n = x.shape[d]
    valid = n - _E.isnan(x).sum(d, keepdim=True) if x.is_floating_point() else \
        _E.full_like(values.narrow(d, 0, 1), n, dtype=_E.int64)
    pos = _E.clamp((valid - 1) // 2, min=0)  # C's truncation: all-NaN rows take position 0
    v, i = values.gather(d, pos), indices.gather(d, pos)
    if not keepdim or not input.dim():
        v, i = v.squeeze(d), i.squeeze(d)
    if not input.dim():
        v, i = v.reshape(()), i.reshape(())
    return _E.return_types.median(v, i)


@_both
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest among equally frequent ones) and the index
    PyTorch's kernel gives for it (the last of its run in its sort)."""
    x = input if input.dim() else input.reshape(1)
    d = dim % x.dim()
    values, indices = _E.sort(x, d)
    v, i = values.movedim(d, -1), indices.movedim(d, -1)
    n = v.shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    starts = _E.cat([_E.ones_like(v[..., :1], dtype=_E.bool), v[..., 1:] != v[..., :-1]], -1)
    run = _E.cumsum(starts.to(_E.int64), -1) - 1  # the run each position belongs to
    lengths = _E.zeros_like(run).scatter_add(-1, run, _E.ones_like(run))
    best = _E.argmax((lengths == lengths.amax(-1, keepdim=True)).to(_E.uint8), -1, keepdim=True)
    end = _E.cumsum(lengths, -1).gather(-1, best) - 1  # the last position of the winning run
    mv, mi = v.gather(-1, end).squeeze(-1), i.gather(-1, end).squeeze(-1)
    if keepdim:
        mv, mi = mv.unsqueeze(d), mi.unsqueeze(d)
    if not input.dim():
        mv, mi = mv.reshape(()), mi.reshape(())
    return _E.return_types.mode(mv, mi)


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"{name}() interpolation must be one of linear, lower, higher, midpoint "
                         f"or nearest. Got {interpolation}")
    if not input.is_floating_point():
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not _is_tensor(q)
    qt = _E.tensor(q, dtype=input.dtype, device=input.device) if scalar_q else q
    if qt.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if qt.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if bool(((qt < 0) | (qt > 1)).any()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x, d = _along(input, dim)
    if x.dim() == 0:
        x, d = x.reshape(1), 0
    if x.shape[d] == 0:
        raise IndexError(f"{name}() input tensor must be non-empty")
    values = _E.sort(x, d).values.movedim(d, -1)  # NaN last
    n = values.shape[-1]
    nan_count = _E.isnan(values).sum(-1, keepdim=True)
    valid = (n - nan_count) if ignore_nan else _E.full_like(nan_count, n)
    qs = qt.reshape(-1)
    rank = qs * (valid - 1).to(input.dtype)  # (..., len(q))
    if interpolation == "lower":
        rank = _E.floor(rank)
    elif interpolation == "higher":
        rank = _E.ceil(rank)
    elif interpolation == "nearest":
        rank = _E.round(rank)
    lo = _E.clamp(_E.floor(rank).to(_E.int64), min=0)
    hi = _E.clamp(_E.ceil(rank).to(_E.int64), min=0, max=n - 1)
    lo = _E.clamp(lo, max=n - 1)
    below, above = values.gather(-1, lo), values.gather(-1, hi)
    if interpolation == "midpoint":
        out = (below + above) / 2
    else:
        out = _E.lerp(below, above, (rank - lo.to(rank.dtype)))
    nan = float("nan")
    if ignore_nan:
        out = _E.where(valid == 0, _E.full_like(out, nan), out)
    else:
        out = _E.where(nan_count > 0, _E.full_like(out, nan), out)
    out = out.movedim(-1, 0)  # q first
    if dim is not None and keepdim and input.dim():  # a 0-dim input keeps no dims
        out = out.unsqueeze(d % input.dim() + 1)
    elif dim is None and keepdim:
        out = out.reshape((out.shape[0],) + (1,) * input.dim())
    if scalar_q:
        out = out.squeeze(0)
    return out


@_both
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles along dim (of all elements when None), interpolated as PyTorch's; a row
    holding NaN gives NaN."""
    return _out(_quantile("quantile", input, q, dim, keepdim, interpolation, False), out)


@_both
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile over the non-NaN values."""
    return _out(_quantile("nanquantile", input, q, dim, keepdim, interpolation, True), out)


@_torch
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """The max, mean, min, sum or prod of each run of `lengths` consecutive entries along axis
    (or of the runs between `offsets`), with `initial` as every run's starting value (an empty
    run's result; an empty mean without it is NaN). lengths has data.shape[:axis] + (runs,)."""
    if reduce not in ("max", "mean", "min", "sum", "prod"):
        raise RuntimeError(f"segment_reduce(): unsupported reduction {reduce!r}: expected one "
                           f"of max, mean, min, sum, prod")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    axis = axis % data.dim()
    if lengths is None:
        n = offsets.shape[-1]
        lengths = offsets.narrow(-1, 1, n - 1) - offsets.narrow(-1, 0, n - 1)
    if tuple(lengths.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected lengths (or offsets) of shape "
                           f"{list(data.shape[:axis])} + [segments], got {list(lengths.shape)}")
    size = data.shape[axis]
    if not unsafe:
        if bool((lengths < 0).any()):
            raise RuntimeError("lengths contains negative value!")
        if bool((lengths.sum(-1) != size).any()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    runs = lengths.shape[-1]
    # Each entry's run: how many runs end at or before it (runs itself: past the last run, an
    # extra bucket dropped at the end).
    ends = lengths.cumsum(-1)
    run = (_E.arange(size, device=data.device) >= ends.unsqueeze(-1)).sum(-2)
    index = run.reshape(tuple(run.shape) + (1,) * (data.dim() - axis - 1)).expand(data.shape)
    shape = list(data.shape)
    shape[axis] = runs + 1
    start = {"max": -math.inf, "min": math.inf, "prod": 1}.get(reduce, 0) \
        if initial is None else initial
    if reduce in ("sum", "mean"):
        out = _E.full(shape, 0 if initial is None else initial, dtype=data.dtype,
                      device=data.device).scatter_add(axis, index, data)
    else:
        out = _E.full(shape, start, dtype=data.dtype, device=data.device).scatter_reduce(
            axis, index, data, {"max": "amax", "min": "amin", "prod": "prod"}[reduce])
    out = out.narrow(axis, 0, runs)
    if reduce == "mean":
        count = lengths.reshape(tuple(lengths.shape) + (1,) * (data.dim() - axis - 1))
        empty = _E.full_like(out, math.nan if initial is None else initial)
        out = _E.where(count > 0, out / count.clamp(min=1).to(out.dtype), empty)
    return out
