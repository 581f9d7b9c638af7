"""torch.testing: assert_close (PyTorch's comparison, default tolerances and messages) and
make_tensor."""
import collections.abc
import math
import numbers

import ember

# rtol, atol per dtype (PyTorch's defaults); other dtypes compare exactly.
_TOLERANCES = {
    ember.float16: (1e-3, 1e-5), ember.bfloat16: (1.6e-2, 1e-5), ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7), ember.complex32: (1e-3, 1e-5), ember.complex64: (1.3e-6, 1e-5),
    ember.complex128: (1e-7, 1e-7),
}


class _Mismatch(AssertionError):
    pass


def _tolerances(*dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(default, msg, where):
    """Raises the mismatch: the default text, or the caller's msg (a string replaces it, a
    callable makes one from it), then which item of a sequence or mapping failed."""
    if isinstance(msg, str):
        raise _Mismatch(msg)
    text = default if msg is None else msg(default)
    if where:
        text += f"\n\nThe failure occurred for item {where}"
    raise _Mismatch(text)


def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where):
    if check_dtype and type(actual) is not type(expected):
        _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", None, where)
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    exact = isinstance(actual, int) and isinstance(expected, int)  # bools too
    if exact and rtol is None and atol is None:
        rtol, atol = 0.0, 0.0
    else:
        rtol, atol = _tolerances(ember.float64, rtol=rtol, atol=atol)
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    rel = diff / abs(expected) if expected != 0 else math.inf
    _fail(f"Scalars are not close!\n\nAbsolute difference: {diff} (up to {atol} allowed)\n"
          f"Relative difference: {rel} (up to {rtol} allowed)", msg, where)


def _index(flat, shape):
    idx = []
    for size in reversed(shape):
        idx.append(flat % size)
        flat //= size
    return tuple(reversed(idx))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride, msg, where):
    def attribute(name, a, e):
        if a != e:
            _fail(f"The values for attribute '{name}' do not match: {a} != {e}.", msg, where)

    attribute("shape", actual.shape, expected.shape)
    if check_device:
        attribute("device", actual.device, expected.device)
    if check_dtype:
        attribute("dtype", actual.dtype, expected.dtype)
    if check_layout:
        attribute("layout", actual.layout, expected.layout)
    if check_stride:
        attribute("stride()", actual.stride(), expected.stride())
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    a, e = actual.detach().to("cpu"), expected.detach().to("cpu")
    common = ember.promote_types(a.dtype, e.dtype)
    exact = not (common.is_floating_point or common.is_complex)
    if exact:  # PyTorch compares integers (and bools) as int64, relative differences in float32
        a, e = a.to(ember.int64), e.to(ember.int64)
    else:
        wide = ember.complex128 if common.is_complex else ember.float64
        a, e = a.to(wide), e.to(wide)
    close = ember.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(close.all()):
        return
    total, bad = close.numel(), int((~close).sum())
    diff = (a - e).abs()
    rel = diff / e.abs()  # true division: float32 for integers, as PyTorch's
    diff = ember.where(close, ember.zeros_like(diff), diff)
    rel = ember.where(close, ember.zeros_like(rel), rel)
    equal = rtol == 0 and atol == 0
    allowed = (lambda tol: "") if equal else (lambda tol: f" (up to {tol} allowed)")
    head = f"{'Scalars' if actual.dim() == 0 else 'Tensor-likes'} are not " \
           f"{'equal' if equal else 'close'}!\n\n"
    if actual.dim() == 0:
        text = (head + f"Absolute difference: {_largest(diff)[0]}{allowed(atol)}\n"
                f"Relative difference: {_largest(rel)[0]}{allowed(rtol)}")
    else:
        (da, ia), (dr, ir) = _largest(diff), _largest(rel)
        shape = tuple(actual.shape)
        text = (head + f"Mismatched elements: {bad} / {total} ({100.0 * bad / total:.1f}%)\n"
                f"Greatest absolute difference: {da} at index {_index(ia, shape)}{allowed(atol)}\n"
                f"Greatest relative difference: {dr} at index {_index(ir, shape)}{allowed(rtol)}")
    _fail(text, msg, where)


def _largest(t):
    """The largest element (NaN counting as largest, as torch.max) and its flat index."""
    flat = t.reshape(-1)
    nan = flat.isnan() if flat.is_floating_point() else None
    if nan is not None and bool(nan.any()):
        i = int(nan.to(ember.int64).argmax())
    else:
        i = int(flat.argmax())
    return flat[i].item(), i


def _as_tensor(x):
    if ember.is_tensor(x):
        return x
    if hasattr(x, "__array__") and not isinstance(x, (str, bytes)):
        return ember.from_numpy(x.__array__()) if hasattr(ember, "from_numpy") else ember.tensor(x)
    return None


def _compare(actual, expected, where, **kw):
    ta, te = _as_tensor(actual), _as_tensor(expected)
    if ta is not None or te is not None:
        if ta is None or te is None:
            _fail(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                  f"{type(expected)}.", None, where)
        if not kw.pop("allow_subclasses") and type(actual) is not type(expected):
            _fail(f"The values for attribute 'type' do not match: {type(actual)} != "
                  f"{type(expected)}.", None, where)
        return _compare_tensors(ta, te, where=where, **kw)
    kw.pop("allow_subclasses")
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(map(str, set(expected) - set(actual)))}\nAdditional keys in the actual "
                  f"mapping: {sorted(map(str, set(actual) - set(expected)))}", None, where)
        for k in expected:
            _compare(actual[k], expected[k], f"{where}[{k!r}]", allow_subclasses=True, **kw)
        return
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(
            actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                  None, where)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, f"{where}[{i}]", allow_subclasses=True, **kw)
        return
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        return _compare_scalars(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"],
                                kw["check_dtype"], kw["msg"], where)
    if actual is None and expected is None:
        return
    _fail(f"No comparison pair was able to handle inputs of type {type(actual)} and "
          f"{type(expected)}.", None, where)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raises AssertionError unless actual and expected (tensors, numbers, or sequences and
    mappings of them) are close: |actual - expected| <= atol + rtol * |expected| elementwise, with
    the dtype's default tolerances when neither is given, and equal metadata."""
    try:
        _compare(actual, expected, "", allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                 equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                 check_layout=check_layout, check_stride=check_stride, msg=msg)
    except _Mismatch as e:
        raise AssertionError(str(e)) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated form: no dtype or device check, NaNs equal by default."""
    if not ember.is_tensor(actual):
        actual = ember.tensor(actual)
    if not ember.is_tensor(expected):
        expected = ember.tensor(expected, dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of random values in [low, high) (PyTorch's make_tensor defaults per dtype)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, ember.Size)):
        shape = tuple(shape[0])
    if dtype == ember.bool:
        t = ember.randint(0, 2, shape, device=device).to(ember.bool)
    elif dtype in (ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64):
        lo = -9 if low is None else math.ceil(low)
        if dtype == ember.uint8:
            lo = max(0, lo)
        hi = 10 if high is None else math.ceil(high)
        t = ember.randint(lo, hi, shape, device=device).to(dtype)
    else:
        lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
        real = ember.float64 if not dtype.is_complex else ember.float64
        t = ember.rand(shape, dtype=real, device=device) * (hi - lo) + lo
        if dtype.is_complex:
            t = ember.complex(t, ember.rand(shape, dtype=real, device=device) * (hi - lo) + lo)
        t = t.to(dtype)
    if exclude_zero:
        t = ember.where(t == 0, ember.ones_like(t), t)
    if noncontiguous and t.numel() > 1:
        t = ember.repeat_interleave(t.reshape(-1), 2)[::2].reshape(t.shape)
    if requires_grad:
        t.requires_grad_()
    return t


__all__ = ["assert_close", "assert_allclose", "make_tensor"]
