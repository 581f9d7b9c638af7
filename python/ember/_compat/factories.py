"""Making tensors: window functions, asarray, frombuffer, Tensor.new. Part of ember._compat (see its
__init__)."""
import builtins
import math

from ._registry import _dname, _is_tensor, _method, _torch
from .dtypes import _KIND

_E = None  # the ember module, set by install()


# ================================================================================================
# window functions
# ================================================================================================


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    dtype = dtype or _E.float32
    if _KIND[_dname(dtype)][0] != 2:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_dname(dtype)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        w = _E.ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        k = _E.arange(window_length, dtype=_E.float64, device=device)
        w = fn(k, n).to(dtype)
    return w.requires_grad_(True) if requires_grad else w


@_torch
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """The Hann window: 0.5 - 0.5 cos(2 pi k / (N - 1))."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.5 - 0.5 * _E.cos(2 * math.pi * k / (n - 1)))


@_torch
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """The Hamming window: alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: alpha - beta * _E.cos(2 * math.pi * k / (n - 1)))


@_torch
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The Blackman window: 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.42 - 0.5 * _E.cos(2 * math.pi * k / (n - 1))
                   + 0.08 * _E.cos(4 * math.pi * k / (n - 1)))


@_torch
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The Bartlett (triangular) window: 1 - |2k / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - (2 * k / (n - 1) - 1).abs())


@_torch
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    def kaiser(k, n):
        a = (n - 1) / 2
        i0_beta = _E.i0(_E.tensor(float(beta), dtype=_E.float64))
        return _E.i0(beta * _E.sqrt(1 - ((k - a) / a) ** 2)) / i0_beta
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, kaiser)


def _range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Deprecated: start, start + step, ... up to end inclusive, in the default float dtype."""
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    values = _E.arange(n, dtype=_E.float64, device=device) * step + start
    r = values.to(dtype or _E.get_default_dtype())
    if out is not None:
        return out.copy_(r)
    return r.requires_grad_(True) if requires_grad else r


_range.__name__ = "range"  # torch.range (not this module's range: that stays Python's)
_torch(_range)


# ================================================================================================
# making tensors
# ================================================================================================


@_torch
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing its memory where it can (a tensor, a NumPy array) unless copy."""
    if _is_tensor(obj):
        t = obj
    elif type(obj).__module__ == "numpy" and hasattr(obj, "dtype") and obj.dtype.kind in "biuf" \
            and obj.flags.writeable:
        t = _E.from_numpy(obj)
    else:
        t = _E.tensor(obj, dtype=dtype, device=device)
    changed = (dtype is not None and t.dtype != dtype) or (
        device is not None and t.device != _E.device(device))
    if copy is False and changed:
        raise ValueError("[asarray] copy=False, but a copy is needed for the dtype or device")
    if changed:
        t = t.to(device=device, dtype=dtype)
    elif copy:
        t = t.clone()
    return t.requires_grad_(True) if requires_grad else t


@_torch
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over a Python buffer's bytes (shared when the buffer is writable)."""
    import numpy as np
    arr = np.frombuffer(buffer, dtype=_dname(dtype), count=count, offset=offset)
    t = _E.from_numpy(arr if arr.flags.writeable else arr.copy())
    return t.requires_grad_(True) if requires_grad else t


@_method
def new(self, *args, device=None):
    """The legacy constructor in x's dtype: x.new(), x.new(2, 3) (uninitialised), x.new([1, 2])."""
    device = device or self.device
    if not args:
        return _E.empty(0, dtype=self.dtype, device=device)
    if len(args) == 1 and _is_tensor(args[0]):
        if args[0].dtype != self.dtype:
            raise TypeError(f"[new] expected a tensor of dtype {self.dtype}, got "
                            f"{args[0].dtype}")
        return args[0]
    sizes = args[0] if len(args) == 1 and isinstance(args[0], _E.Size) else args
    if all(isinstance(s, int) and not isinstance(s, builtins.bool) for s in sizes):
        return _E.empty(*sizes, dtype=self.dtype, device=device)
    return _E.tensor(args[0], dtype=self.dtype, device=device)


@_torch
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-D tensor of size elements read from a file's raw bytes. shared=True maps the file
    (made or grown as needed) so that the tensor's changes are written to it; otherwise the
    elements are copied and the file must hold them."""
    import os

    import numpy as np
    dtype = dtype or _E.get_default_dtype()
    name = _dname(dtype)
    np_dtype = np.uint16 if name == "bfloat16" else np.dtype(name)
    nbytes = size * np.dtype(np_dtype).itemsize
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
            with open(filename, "ab") as f:
                f.truncate(nbytes)
        arr = np.memmap(filename, dtype=np_dtype, mode="r+", shape=(size,)) if size else \
            np.empty(0, np_dtype)
    else:
        arr = np.fromfile(filename, dtype=np_dtype, count=size)
        if arr.size < size:
            raise RuntimeError(f"from_file: unexpected EOF, expected {size} elements of "
                               f"{nbytes // max(size, 1)} bytes in {filename}, got {arr.size}")
    t = _E.from_numpy(arr)
    if name == "bfloat16":
        t = t.view(_E.bfloat16)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(True) if requires_grad else t
