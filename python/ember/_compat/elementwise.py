"""Elementwise math: xlogy, copysign, gcd, bitwise ops on bool, special functions, histogram,
scatters. Part of ember._compat (see its __init__)."""
import builtins
import collections
import math

from ._registry import _as_tensor, _both, _dname, _floating, _is_tensor, _out, _torch
from .dtypes import _KIND, _promote, _result_type_name, is_signed
from .shapes import broadcast_tensors
from .reductions import _legacy, _logaddexp

_E = None  # the ember module, set by install()


# ================================================================================================
# elementwise math
# ================================================================================================


def _binary_float(input, other):
    """input and other as tensors of their promoted dtype, floating (ints go to float32)."""
    if not _is_tensor(input) and not _is_tensor(other):
        raise TypeError("expected a Tensor as input or other, got two numbers")
    a = input if _is_tensor(input) else _E.tensor(input, device=other.device)
    b = _as_tensor(other, a)
    name = _result_type_name(input, other)
    if _KIND[name][0] != 2:
        name = "float32"
    d = getattr(_E, name)
    return a.to(d), b.to(d)


@_both
def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input is 0 (unless other is NaN)."""
    x, y = _binary_float(input, other)
    # 0 * log(other) is 0 where other <= 0 too; the gradient with respect to x stays log(other).
    log_y = _E.log(y)
    log_y = _E.where((x == 0) & (y <= 0), _E.zeros_like(log_y), log_y)
    return _out(x * log_y, out)


@_both
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."""
    z = _floating(input)
    if eps is not None:
        z = _E.clamp(z, eps, 1 - eps)
    return _out(_E.log(z / (1 - z)), out)


@_both
def signbit(input, *, out=None):
    """Whether each element's sign bit is set (-0.0 included; NaN counts as positive)."""
    if not input.is_floating_point():
        return _out(input < 0 if is_signed(input) else _E.zeros_like(input, dtype=_E.bool), out)
    return _out((input < 0) | ((input == 0) & (1 / input < 0)), out)


@_both
def copysign(input, other, *, out=None):
    """|input| with the sign of other (-0.0 counts as negative)."""
    x, y = _binary_float(input, other)
    neg = signbit(y)
    return _out(_E.where(neg, -x.abs(), x.abs()), out)


@_both
def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _floating(input)
    zero = x == 0
    safe = _E.where(zero, _E.ones_like(x), x) * math.pi
    return _out(_E.where(zero, _E.ones_like(x), _E.sin(safe) / safe), out)


@_both
def heaviside(input, values, *, out=None):
    """The step function: 0 below 0, values at 0, 1 above 0."""
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    step = (input > 0).to(input.dtype)
    return _out(_E.where(input == 0, values.to(input.dtype), step), out)


@_both
def logaddexp2(input, other, *, out=None):
    """log2(2**input + 2**other), without overflow."""
    x, y = _binary_float(input, other)
    return _out(_logaddexp(x * math.log(2), y * math.log(2)) / math.log(2), out)


@_both
def ldexp(input, other, *, out=None):
    """input * 2**other."""
    return _out(input * _E.exp2(other), out)


def _integer_pair(input, other, name):
    """input and other broadcast, in their promoted integer dtype."""
    other = _as_tensor(other, input)
    for t in (input, other):
        if _KIND[_dname(t.dtype)][0] != 1:
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{_legacy(t.dtype)}'")
    d = getattr(_E, _result_type_name(input, other))
    return broadcast_tensors(input.to(d), other.to(d))


@_both
def gcd(input, other, *, out=None):
    """The elementwise greatest common divisor of two integer tensors (gcd(0, 0) = 0)."""
    a, b = (t.abs() for t in _integer_pair(input, other, "gcd"))
    while True:  # Euclid, all elements at once: log(max) rounds
        nz = b != 0
        if not builtins.bool(nz.any()):
            return _out(a, out)
        r = _E.remainder(a, _E.where(nz, b, _E.ones_like(b)))
        a, b = _E.where(nz, b, a), _E.where(nz, r, b)


@_both
def lcm(input, other, *, out=None):
    """The elementwise least common multiple of two integer tensors (0 if either is 0)."""
    a, b = _integer_pair(input, other, "lcm")
    g = gcd(a, b)
    safe = _E.where(g == 0, _E.ones_like(g), g)
    return _out(_E.where(g == 0, _E.zeros_like(g), (_E.div(a, safe, rounding_mode="trunc") * b)
                         .abs()), out)


@_both
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in test_elements."""
    if not _is_tensor(elements):
        elements = _E.tensor(elements, device=test_elements.device)
    if not _is_tensor(test_elements):
        test_elements = _E.tensor([test_elements], device=elements.device)
    name = _promote(_dname(elements.dtype), _dname(test_elements.dtype))
    e, t = elements.to(getattr(_E, name)), test_elements.reshape(-1).to(getattr(_E, name))
    if e.numel() * t.numel() <= 1 << 22:
        found = (e.unsqueeze(-1) == t).any(-1) if t.numel() else _E.zeros_like(e, dtype=_E.bool)
    else:  # a sorted search instead of the (elements, test_elements) comparison
        s = _E.sort(t).values
        pos = _E.clamp(_E.searchsorted(s, e.reshape(-1)), max=builtins.max(s.numel() - 1, 0))
        found = (s[pos] == e.reshape(-1)).reshape(e.shape)
    return ~found if invert else found


@_torch
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative along each dim by second-order central differences (first- or second-order
    one-sided ones at the edges), for unit or given spacing or sample coordinates, as PyTorch's."""
    if spacing is None:
        spacing = 1
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                           f"{edge_order}")
    dims = list(range(input.dim())) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.dim() for d in dims]
    if isinstance(spacing, (int, float)) or _is_tensor(spacing) and spacing.dim() == 0:
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1:
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a spacing "
                           f"argument of length {len(spacing)} and a dim argument of length "
                           f"{len(dims)}.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = _floating(input)
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacing))


def _gradient_along(f, d, h, edge_order):
    n = f.shape[d]

    def part(start, stop=None):
        return f.narrow(d, start, (n if stop is None else stop) - start)

    if _is_tensor(h) and h.dim() == 1:
        # Coordinates: the three-point formulas for uneven steps.
        shape = [1] * f.dim()
        shape[d] = -1
        dx = h[1:] - h[:-1]
        dx1, dx2 = dx[:-1], dx[1:]
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * part(0, n - 2) + b * part(1, n - 1) + c * part(2)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / dx[0]
            last = (part(n - 1) - part(n - 2, n - 1)) / dx[-1]
        else:
            h0, h1 = dx[0], dx[1]
            first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * part(0, 1)
                     + (h0 + h1) / (h0 * h1) * part(1, 2) - h0 / (h1 * (h0 + h1)) * part(2, 3))
            g0, g1 = dx[-1], dx[-2]
            last = (g0 / (g1 * (g0 + g1)) * part(n - 3, n - 2)
                    - (g0 + g1) / (g0 * g1) * part(n - 2, n - 1)
                    + (2.0 * g0 + g1) / (g0 * (g0 + g1)) * part(n - 1))
    else:
        h = float(h)
        center = (part(2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(n - 1) - part(n - 2, n - 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
            last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1)) / h
    return _E.cat([first, center, last], d)


@_torch
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x**(N-1), ..., x**0 (reversed if increasing)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if _KIND[_dname(x.dtype)][0] < 2:
        x = x.to(_E.int64)
    if n == 0:
        return x.new_empty(x.shape[0], 0)
    cols = _E.cat([x.new_ones(x.shape[0], 1), x.unsqueeze(1).expand(-1, n - 1)], 1)
    out = _E.cumprod(cols, 1)
    return out if increasing else out.flip(1)



@_both
def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p: sum of lgamma(x - i/2), i < p, plus a constant."""
    x = _floating(input)
    out = _E.lgamma(x.unsqueeze(-1) - _E.arange(p, dtype=x.dtype, device=x.device) / 2).sum(-1)
    return out + p * (p - 1) / 4 * math.log(math.pi)


def _check_quant_range(name, zero_point_ok, quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError(f"{name}: `quant_min` should be less than or equal to `quant_max`.")
    if not zero_point_ok():
        raise RuntimeError(f"{name}: `zero_point` must be between `quant_min` and `quant_max`.")


def _fake_quantize(input, scale, zero_point, quant_min, quant_max, name):
    """(clamp(nearbyint(x / scale) + zp, qmin, qmax) - zp) * scale, computed as PyTorch's kernel
    does (x times 1/scale in float, rounding half to even), with its straight-through gradient:
    1 where the rounded value falls inside [qmin, qmax], 0 where it was clamped."""
    if not input.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating input, got {_dname(input.dtype)}")
    if not _is_tensor(scale):
        scale = _E.tensor(scale, dtype=_E.float32)
    q = _E.round(input.detach() * (1.0 / scale)) + zero_point
    inside = (q >= quant_min) & (q <= quant_max)
    value = (q.clamp(quant_min, quant_max) - zero_point) * scale
    value = value.to(input.dtype)
    if not input.requires_grad:
        return value
    return input * inside + (value - input * inside).detach()


@_torch
def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """input rounded to the grid of a quantized tensor (scale, zero_point, [quant_min,
    quant_max]) and back, in input's dtype; scale and zero_point may be 0-dim tensors."""
    name = "fake_quantize_per_tensor_affine"
    zp = int(zero_point) if not _is_tensor(zero_point) else zero_point.to(_E.float32)
    _check_quant_range(name, lambda: quant_min <= int(zero_point) <= quant_max, quant_min,
                       quant_max)
    if _is_tensor(scale):
        scale = scale.to(_E.float32)
    return _fake_quantize(input, scale, zp, quant_min, quant_max, name)


@_torch
def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """fake_quantize_per_tensor_affine with one scale and zero_point per index of dim axis."""
    name = "fake_quantize_per_channel_affine"
    axis = axis % input.dim()
    if scale.dim() != 1 or scale.numel() != input.shape[axis] or \
            zero_point.shape != scale.shape:
        raise RuntimeError(f"{name}: expected scale and zero_point of {input.shape[axis]} "
                           f"elements (dimension {axis} of the input), got "
                           f"{tuple(scale.shape)} and {tuple(zero_point.shape)}")
    _check_quant_range(name, lambda: not bool(((zero_point < quant_min) |
                                                (zero_point > quant_max)).any()),
                       quant_min, quant_max)
    shape = [1] * input.dim()
    shape[axis] = -1
    scale = scale.to(_E.float32).reshape(shape)
    zero_point = _E.round(zero_point.to(_E.float32)).reshape(shape)
    return _fake_quantize(input, scale, zero_point, quant_min, quant_max, name)



@_torch
def adjoint(input):
    """The conjugate transpose of the last two dims: their transpose, as ember is real."""
    return input.adjoint()


_histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])
_histogramdd = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


def _outer_edges(column, bins, lo_hi):
    """bins + 1 equal edges over lo_hi (or the column's min and max), an empty range widened by
    0.5 each way as PyTorch (and NumPy) do."""
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
    elif column.numel():
        lo, hi = column.min().item(), column.max().item()
    else:
        lo, hi = 0.0, 0.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _E.linspace(lo, hi, bins + 1, dtype=column.dtype, device=column.device)


def _bin_counts(points, edges, weight, density):
    """The histogram of the rows of points (N, D) over one edge tensor per dim, as PyTorch's
    histogramdd kernel counts: a point outside [edges[0], edges[-1]] in any dim is left out, the
    bin is edges[i] <= x < edges[i + 1] with the last bin closed on the right."""
    counts = [e.numel() - 1 for e in edges]
    keep = _E.ones(points.shape[0], dtype=_E.bool, device=points.device)
    flat = _E.zeros(points.shape[0], dtype=_E.int64, device=points.device)
    for d, e in enumerate(edges):
        x = points[:, d]
        keep = keep & (x >= e[0]) & (x <= e[-1])
        idx = (_E.bucketize(x, e, right=True) - 1).clamp(0, max(counts[d] - 1, 0))
        flat = flat * counts[d] + idx
    w = _E.ones(points.shape[0], dtype=points.dtype, device=points.device) if weight is None \
        else weight.reshape(-1).to(points.dtype)
    total = 1
    for n in counts:
        total *= n
    hist = _E.zeros(total, dtype=points.dtype, device=points.device).index_add(
        0, flat[keep], w[keep]).reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[d] = counts[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return hist


def _floating_histogram(input):
    if not input.is_floating_point():
        raise RuntimeError(f"\"histogramdd\" not implemented for '{_legacy(input.dtype)}'")


@_both
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of input's values in `bins` equal bins over range (or given edges)."""
    _floating_histogram(input)
    x = input.reshape(-1, 1)
    edges = bins.to(input.dtype) if _is_tensor(bins) else _outer_edges(x[:, 0], bins, range)
    hist = _bin_counts(x, [edges], weight, False)
    if density:  # PyTorch divides once by the total times the widths
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _histogram(hist, edges)


@_torch
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points in input's last dim: bins an int, one int per dim, or one
    edge tensor per dim; range (lo0, hi0, lo1, hi1, ...) the outer edges for int bins."""
    _floating_histogram(input)
    dims = input.shape[-1]
    points = input.reshape(-1, dims)
    if isinstance(bins, int):
        bins = [bins] * dims
    if len(bins) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for each "
                           f"of the {dims} dimensions of the input, but got {len(bins)}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should "
                           f"have {2 * dims} elements, but got {len(range)}")
    edges = [b.to(input.dtype) if _is_tensor(b) else
             _outer_edges(points[:, d], b, None if range is None else range[2 * d:2 * d + 2])
             for d, b in enumerate(bins)]
    return _histogramdd(_bin_counts(points, edges, weight, density), tuple(edges))


@_both
def select_scatter(input, src, dim, index):
    """input with its slice at index along dim replaced by src, out of place."""
    index = index % input.shape[dim]
    parts = [input.narrow(dim, 0, index), src.unsqueeze(dim).to(input.dtype),
             input.narrow(dim, index + 1, input.shape[dim] - index - 1)]
    return _E.cat(parts, dim)


@_both
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[start:end:step] along dim replaced by src, out of place."""
    size = input.shape[dim]
    positions = _E.arange(size, device=input.device)[slice(start, end, step)]
    return input.clone().index_copy_(dim, positions, src.to(input.dtype))


@_both
def diagflat(input, offset=0):
    """The flattened input as the diagonal (at offset) of a square matrix."""
    return _E.diag(input.reshape(-1), offset)
