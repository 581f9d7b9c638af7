"""Fractional max pooling (Graham 2014) as PyTorch's: windows at pseudo-random fractional
strides, one random sample per batch entry, channel and dim. Part of ember._compat (see its
__init__)."""
import math

from ._registry import _functional

_E = None  # the ember module, set by install()


def _window_starts(samples, in_size, out_size, pool):
    """Each output position's window start along one dim, (N, C, out_size), from samples (N, C)
    in [0, 1): floor((i + u) alpha) - floor(u alpha), alpha = (in - pool) / (out - 1), and the
    last window flush with the end. Computed in the samples' dtype, as PyTorch's kernel is."""
    n, c = samples.shape
    if out_size == 0:
        return _E.zeros(n, c, 0, dtype=_E.int64, device=samples.device)
    last = _E.full((n, c, 1), in_size - pool, dtype=_E.int64, device=samples.device)
    if out_size == 1:
        return last
    alpha = _E.tensor(float(in_size - pool), dtype=samples.dtype,
                      device=samples.device) / (out_size - 1)
    i = _E.arange(out_size - 1, dtype=samples.dtype, device=samples.device)
    u = samples.unsqueeze(-1)
    starts = ((i + u) * alpha).trunc().long() - (u * alpha).trunc().long()
    return _E.cat([starts, last], -1)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                         samples, dims):
    name = f"fractional_max_pool{dims}d"
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    kernel = (kernel_size,) * dims if isinstance(kernel_size, int) else tuple(kernel_size)
    sizes = tuple(input.shape[-dims:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an "
                             f"output_ratio")
        ratio = (output_ratio,) * dims if isinstance(output_ratio, (int, float)) else \
            tuple(output_ratio)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    out = (output_size,) * dims if isinstance(output_size, int) else tuple(output_size)
    for s, o, k in zip(sizes, out, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool size {k} too large relative to input size {s} "
                               f"and output size {o}")
    batched = input.dim() == dims + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    if samples is None:
        samples = _E.rand(n, c, dims, dtype=input.dtype, device=input.device)
    # PyTorch's 2-d kernel takes the width's sample first; the 3-d one time, height, width.
    order = (1, 0) if dims == 2 else (0, 1, 2)
    # The flat index within a plane of every window element: (N, C, *out, *kernel).
    flat = _E.zeros((n, c) + (1,) * (2 * dims), dtype=_E.int64, device=input.device)
    stride = 1
    for d in reversed(range(dims)):
        starts = _window_starts(samples[:, :, order[d]], sizes[d], out[d], kernel[d])
        offsets = _E.arange(kernel[d], device=input.device)
        pos = starts.reshape((n, c) + tuple(out[d] if j == d else 1 for j in range(dims)) +
                             (1,) * dims) + \
            offsets.reshape((1, 1) + (1,) * dims + tuple(kernel[d] if j == d else 1
                                                          for j in range(dims)))
        flat = flat + pos * stride
        stride *= sizes[d]
    flat = flat.expand((n, c) + out + kernel).reshape(n, c, math.prod(out), -1)
    planes = x.reshape(n, c, 1, -1).expand(n, c, flat.shape[2], stride)
    values = planes.gather(-1, flat)
    best, which = values.max(-1)
    indices = flat.gather(-1, which.unsqueeze(-1)).squeeze(-1)
    best, indices = best.reshape((n, c) + out), indices.reshape((n, c) + out)
    if not batched:
        best, indices = best.squeeze(0), indices.squeeze(0)
    return (best, indices) if return_indices else best


@_functional
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d max pooling over windows at pseudo-random fractional strides: output_size, or
    output_ratio of the input's size; _random_samples (N, C, 2) in [0, 1) fixes the windows."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2)


@_functional
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d max pooling over windows at pseudo-random fractional strides: output_size, or
    output_ratio of the input's size; _random_samples (N, C, 3) in [0, 1) fixes the windows."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3)


@_functional
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool2d's (output, indices)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 2)


@_functional
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool3d's (output, indices)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 3)
