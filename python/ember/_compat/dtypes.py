"""dtypes: finfo, iinfo, the default dtype and device, type promotion. Part of ember._compat (see
its __init__)."""
import builtins
import sys

from ._registry import _TORCH, _both, _check_tensor, _dname, _is_tensor, _torch

_E = None  # the ember module, set by install()


# ================================================================================================
# dtypes: finfo, iinfo, default dtype, promotion
# ================================================================================================

# Category (0 bool, 1 integer, 2 floating, 3 complex) and bits of each ember dtype.
_KIND = {"bool": (0, 8), "uint8": (1, 8), "int8": (1, 8), "int16": (1, 16), "int32": (1, 32),
         "int64": (1, 64), "float16": (2, 16), "bfloat16": (2, 16), "float32": (2, 32),
         "float64": (2, 64), "complex32": (3, 32), "complex64": (3, 64), "complex128": (3, 128)}
_PY_TYPES = {float: "float64", int: "int64", builtins.bool: "bool", complex: "complex128"}


def _to_dtype(t, op, arg="type", pos=1):
    """A dtype from a dtype or a Python type (float is float64, as in PyTorch)."""
    if isinstance(t, _E.dtype):
        return t
    if t in _PY_TYPES:
        return getattr(_E, _PY_TYPES[t])
    raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be torch.dtype, not "
                    f"{type(t).__name__}")


class finfo:
    """Machine limits of a floating dtype: bits, eps, max, min, tiny, resolution (torch.finfo)."""

    # bits, eps, max, tiny, resolution
    _TABLE = {"float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
              "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 0.01),
              "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-06),
              "float64": (64, 2.0 ** -52, sys.float_info.max, sys.float_info.min, 1e-15)}

    def __init__(self, type=None):
        d = _E.float32 if type is None else _to_dtype(type, "finfo")
        if d.is_complex:  # a complex dtype's limits are its parts' (complex64: float32's)
            d = d.to_real()
        name = _dname(d)
        if name not in self._TABLE:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        self.bits, self.eps, self.max, self.tiny, self.resolution = self._TABLE[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype: bits, max, min (torch.iinfo)."""

    _TABLE = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -2 ** 15, 2 ** 15 - 1),
              "int32": (32, -2 ** 31, 2 ** 31 - 1), "int64": (64, -2 ** 63, 2 ** 63 - 1)}

    def __init__(self, type):
        d = _to_dtype(type, "iinfo")
        name = _dname(d)
        if name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if name not in self._TABLE:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        self.bits, self.min, self.max = self._TABLE[name]
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


_TORCH["finfo"] = finfo
_TORCH["iinfo"] = iinfo


@_torch
def get_default_dtype():
    """The dtype of floating tensors made from Python floats: float32 in ember."""
    return _E.float32


def _default_float_only(name, what):
    raise NotImplementedError(f"[{name}] ember's default floating dtype is float32, got {what}; "
                              "pass dtype= to the factories (or .to(dtype)) instead")


@_torch
def set_default_dtype(d):
    """Accepts float32 only: ember's default floating dtype is fixed (see get_default_dtype)."""
    d = _to_dtype(d, "set_default_dtype", "d")
    if _KIND[_dname(d)][0] != 2:
        raise TypeError("only floating-point types are supported as the default type")
    if _dname(d) != "float32":
        _default_float_only("set_default_dtype", _dname(d))


@_torch
def get_default_device():
    """The device factories create tensors on: the CPU in ember."""
    return _E.device("cpu")


@_torch
def set_default_device(device):
    """Accepts the CPU (or None) only: ember's factories create tensors on the CPU unless given
    device=."""
    if device is None:
        return
    d = _E.device(device) if not isinstance(device, _E.device) else device
    if d.type != "cpu":
        raise NotImplementedError(f"[set_default_device] ember's factories create tensors on the "
                                  f"CPU by default, got {device!r}; pass device= to the factories "
                                  "(or .to(device)) instead")


@_torch
def set_default_tensor_type(t):
    """Accepts the float32 CPU tensor type only (torch.FloatTensor or its name)."""
    name = t if isinstance(t, str) else f"{getattr(t, '__module__', '')}.{t.__name__}"
    name = name.replace("ember.", "torch.")
    short = name.rpartition(".")[2]
    if short not in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor"):
        raise TypeError("only floating-point types are supported as the default type")
    if name != "torch.FloatTensor":
        _default_float_only("set_default_tensor_type", name)


@_torch
def is_floating_point(input):
    """Whether input's dtype is a floating one."""
    _check_tensor(input, "is_floating_point")
    return _KIND[_dname(input.dtype)][0] == 2



@_both
def is_signed(input):
    """Whether input's dtype holds negative numbers (not uint8 nor bool)."""
    _check_tensor(input, "is_signed")
    return _dname(input.dtype) not in ("uint8", "bool")


@_torch
def is_storage(obj):
    """False: ember has no storage objects."""
    return False


@_torch
def typename(o):
    """o's type name as PyTorch spells it: 'torch.FloatTensor' for a tensor, else module.name."""
    if _is_tensor(o):
        return o.type()
    module = ""
    if getattr(o, "__module__", None) not in (None, "builtins", "__builtin__"):
        module = o.__module__ + "."
    name = getattr(o, "__qualname__", None) or getattr(o, "__name__", None)
    return module + (name or o.__class__.__name__)


def _promote(a, b):
    """PyTorch's promote_types on dtype names (core/dtype.cpp's rule)."""
    return _dname(_E._C._promote_types(getattr(_E, a), getattr(_E, b)))


@_torch
def promote_types(type1, type2):
    """The smallest dtype that both type1 and type2 convert to without losing their category."""
    t1 = _to_dtype(type1, "promote_types", "type1", 1)
    t2 = _to_dtype(type2, "promote_types", "type2", 2)
    return getattr(_E, _promote(_dname(t1), _dname(t2)))


@_torch
def can_cast(from_, to):
    """Whether type promotion may cast from_ to `to` (no float to integer, no number to bool)."""
    return _E._C._can_cast(_to_dtype(from_, "can_cast", "from", 1),
                           _to_dtype(to, "can_cast", "to", 2))


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority operand counts only when it has a higher
    # category (or higher is bool).
    if higher is None:
        return lower
    if lower is None or _KIND[higher][0] == 3:
        return higher
    if _KIND[lower][0] == 3:  # a complex scalar keeps a floating tensor's precision
        return _dname(getattr(_E, higher).to_complex()) if _KIND[higher][0] == 2 else lower
    if _KIND[higher][0] == 2:
        return higher
    if higher == "bool" or _KIND[lower][0] == 2:
        return _promote(higher, lower)
    return higher


def _result_type_name(*operands):
    dim = zero = wrapped = None
    for x in operands:
        if _is_tensor(x):
            name = _dname(x.dtype)
            if x.dim() > 0:
                dim = name if dim is None else _promote(dim, name)
            else:
                zero = name if zero is None else _promote(zero, name)
        elif isinstance(x, (builtins.bool, int, float, complex)):
            name = ("bool" if isinstance(x, builtins.bool) else
                    "int64" if isinstance(x, int) else
                    "float32" if isinstance(x, float) else "complex64")
            wrapped = name if wrapped is None else _promote(wrapped, name)
        else:
            raise TypeError(f"result_type(): expected a Tensor or a Number, got "
                            f"{type(x).__name__}")
    return _combine(dim, _combine(zero, wrapped))


@_torch
def result_type(tensor, other):
    """The dtype an arithmetic op on tensor and other gives (Tensors or Python numbers)."""
    return getattr(_E, _result_type_name(tensor, other))
