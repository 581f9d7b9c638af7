"""What install() adds ({name: object} per target), the decorators that register into it, and the
helpers every _compat module shares. The modules import these from here, not from the package's
__init__ (which imports the modules), so that no import goes round in a cycle."""

_E = None  # the ember module, set by install()

# --- what install() adds: {name: object} per target ---
_TORCH, _TENSOR, _PROPS, _F, _AUTOGRAD = {}, {}, {}, {}, {}


def _torch(fn):
    _TORCH[fn.__name__] = fn
    return fn


def _both(fn):
    """ember.name(input, ...) and Tensor.name(self, ...)."""
    _TORCH[fn.__name__] = fn
    _TENSOR[fn.__name__] = fn
    return fn


def _method(fn):
    _TENSOR[fn.__name__] = fn
    return fn


def _functional(fn):
    _F[fn.__name__] = fn
    return fn


def _is_tensor(x):
    return isinstance(x, _E.Tensor)


def _dname(dtype):
    return str(dtype).rpartition(".")[2]


def _check_tensor(x, op, arg="input", pos=1):
    if not _is_tensor(x):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _floating(x):
    """x itself if floating point or complex, else x in the default float dtype (as PyTorch's
    math ops)."""
    return x if x.is_floating_point() or x.is_complex() else x.to(_E.float32)


def _as_tensor(x, like):
    """A Python number as a 0-dim tensor on like's device (a wrapped number, for promotion)."""
    if _is_tensor(x):
        return x
    return _E.tensor(x, device=like.device)


def _out(result, out):
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"[out=] expected out of shape {list(result.shape)}, got "
                           f"{list(out.shape)}")
    with _E.no_grad():
        out.copy_(result)
    return out
