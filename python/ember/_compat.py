"""PyTorch 1.13 names that programs touch and that need no kernel of their own: dtype facts,
memory formats, RNG state, broadcasting helpers, small math and Tensor conveniences, each written
over ember's ops. install(ember) adds a name only where ember lacks it, so a C++ op declared
later wins without a change here."""
import builtins
import collections
import contextlib
import functools
import itertools
import math
import os
import sys
import types
import warnings

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
    """x itself if floating point, else x in the default float dtype (as PyTorch's math ops)."""
    return x if x.is_floating_point() else x.to(_E.float32)


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


# ================================================================================================
# dtypes: finfo, iinfo, default dtype, promotion
# ================================================================================================

# Category (0 bool, 1 integer, 2 floating) and bits of each ember dtype.
_KIND = {"bool": (0, 8), "uint8": (1, 8), "int32": (1, 32), "int64": (1, 64), "float16": (2, 16),
         "bfloat16": (2, 16), "float32": (2, 32), "float64": (2, 64)}
_PY_TYPES = {float: "float64", int: "int64", builtins.bool: "bool"}


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

    _TABLE = {"uint8": (8, 0, 255), "int32": (32, -2 ** 31, 2 ** 31 - 1),
              "int64": (64, -2 ** 63, 2 ** 63 - 1)}

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


@_both
def is_floating_point(input):
    """Whether input's dtype is a floating one."""
    _check_tensor(input, "is_floating_point")
    return _KIND[_dname(input.dtype)][0] == 2


@_both
def is_complex(input):
    """False: ember has no complex dtypes."""
    _check_tensor(input, "is_complex")
    return False


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
    """PyTorch's promote_types on dtype names."""
    if a == b:
        return a
    (ka, ba), (kb, bb) = _KIND[a], _KIND[b]
    if ka != kb:
        return a if ka > kb else b
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if ba > bb else b


@_torch
def promote_types(type1, type2):
    """The smallest dtype that both type1 and type2 convert to without losing their category."""
    t1 = _to_dtype(type1, "promote_types", "type1", 1)
    t2 = _to_dtype(type2, "promote_types", "type2", 2)
    return getattr(_E, _promote(_dname(t1), _dname(t2)))


@_torch
def can_cast(from_, to):
    """Whether type promotion may cast from_ to `to` (no float to integer, no number to bool)."""
    f = _KIND[_dname(_to_dtype(from_, "can_cast", "from", 1))][0]
    t = _KIND[_dname(_to_dtype(to, "can_cast", "to", 2))][0]
    return not ((f == 2 and t < 2) or (f > 0 and t == 0))


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority operand counts only when it has a higher
    # category (or higher is bool).
    if higher is None:
        return lower
    if lower is None or _KIND[higher][0] == 2:
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
        elif isinstance(x, (builtins.bool, int, float)):
            name = ("bool" if isinstance(x, builtins.bool) else
                    "int64" if isinstance(x, int) else "float32")
            wrapped = name if wrapped is None else _promote(wrapped, name)
        else:
            raise TypeError(f"result_type(): expected a Tensor or a Number, got "
                            f"{type(x).__name__}")
    return _combine(dim, _combine(zero, wrapped))


@_torch
def result_type(tensor, other):
    """The dtype an arithmetic op on tensor and other gives (Tensors or Python numbers)."""
    return getattr(_E, _result_type_name(tensor, other))


# ================================================================================================
# layouts and memory formats
# ================================================================================================

class layout:
    """A tensor's layout; ember's only one is `strided` (torch.layout)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return (_layout_by_name, (self._name,))


class memory_format:
    """How a 4-D/5-D tensor orders its dimensions in memory (torch.memory_format)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return (_memory_format_by_name, (self._name,))


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_FORMATS = {f._name: f for f in (contiguous_format, preserve_format, channels_last,
                                  channels_last_3d)}


def _layout_by_name(name):
    return strided


def _memory_format_by_name(name):
    return _FORMATS[name]


_TORCH.update(layout=layout, strided=strided, memory_format=memory_format,
              contiguous_format=contiguous_format, preserve_format=preserve_format,
              channels_last=channels_last, channels_last_3d=channels_last_3d,
              legacy_contiguous_format=contiguous_format)
_PROPS["layout"] = property(lambda self: strided, doc="strided: ember's only layout.")

# channels_last orders (N, C, H, W) as (N, H, W, C) in memory; channels_last_3d (N, C, D, H, W)
# as (N, D, H, W, C). The permutation that makes such a tensor row-major:
_LAST = {"channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def _in_format(x, fmt):
    """x copied into memory format fmt (the values are unchanged; only the strides differ)."""
    if fmt is None or fmt is preserve_format:
        return x
    if fmt is contiguous_format:
        return _ORIGINAL["contiguous"](x)
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be a memory_format, got {type(fmt).__name__}")
    rank, perm = _LAST[fmt._name]
    if x.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    inverse = sorted(range(rank), key=lambda i: perm[i])
    return _ORIGINAL["contiguous"](x.permute(*perm)).permute(*inverse)


def _is_in_format(x, fmt):
    rank, perm = _LAST[fmt._name]
    if x.dim() != rank:
        return False
    expected, size = 1, x.shape
    for d in reversed(perm):
        if size[d] != 1 and x.stride(d) != expected:
            return False
        expected *= size[d]
    return True


def _wrap_memory_format(original, fmt_default):
    @functools.wraps(original)
    def method(self, *args, memory_format=fmt_default, **kwargs):
        out = original(self, *args, **kwargs)
        return out if memory_format is fmt_default else _in_format(out, memory_format)
    return method


def _wrap_is_contiguous(original):
    @functools.wraps(original)
    def is_contiguous(self, memory_format=contiguous_format):
        if memory_format is contiguous_format:
            return original(self)
        if memory_format is preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return _is_in_format(self, memory_format)
    return is_contiguous


def _wrap_numpy(original):
    @functools.wraps(original)
    def numpy(self, *, force=False):
        if force:
            return original(self.detach().cpu())
        return original(self)
    return numpy


# The existing methods that gain PyTorch's keywords: (name, wrapper), and the originals.
_ORIGINAL = {}
_WRAPPED = [("clone", lambda f: _wrap_memory_format(f, preserve_format)),
            ("contiguous", lambda f: _wrap_memory_format(f, contiguous_format)),
            ("cpu", lambda f: _wrap_memory_format(f, preserve_format)),
            ("is_contiguous", _wrap_is_contiguous),
            ("numpy", _wrap_numpy)]


# ================================================================================================
# global switches: printing, determinism, precision, threads, anomaly mode
# ================================================================================================

_STATE = {"deterministic": False, "warn_only": False, "matmul_precision": "high",
          "interop_threads": 1, "warn_always": False, "anomaly": False, "anomaly_nan": True,
          "printoptions": {}}


@_torch
def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Accepted and recorded; ember's tensor printing does not read them yet."""
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth, profile=profile, sci_mode=sci_mode)
    _STATE["printoptions"].update({k: v for k, v in given.items() if v is not None})


@_torch
def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the flag; ember's CPU ops are deterministic, and it does not check its GPU ones."""
    _STATE["deterministic"] = builtins.bool(mode)
    _STATE["warn_only"] = builtins.bool(warn_only)


@_torch
def are_deterministic_algorithms_enabled():
    """The flag use_deterministic_algorithms set."""
    return _STATE["deterministic"]


@_torch
def is_deterministic_algorithms_warn_only_enabled():
    """The warn_only flag use_deterministic_algorithms set."""
    return _STATE["warn_only"]


@_torch
def set_deterministic_debug_mode(debug_mode):
    """0/'default', 1/'warn' or 2/'error': use_deterministic_algorithms by level."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, builtins.bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


@_torch
def get_deterministic_debug_mode():
    """0, 1 or 2, as set_deterministic_debug_mode takes it."""
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


@_torch
def set_flush_denormal(mode):
    """False: ember cannot switch the CPU's denormal mode, which PyTorch reports this way."""
    return False


@_torch
def set_float32_matmul_precision(precision):
    """'highest' turns TF32 matmuls off, 'high' and 'medium' on (see backends.cuda.matmul)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.")
        return
    _STATE["matmul_precision"] = precision
    _E.backends.cuda.matmul.allow_tf32 = precision != "highest"


@_torch
def get_float32_matmul_precision():
    """'highest' when TF32 matmuls are off, else the precision last set ('high' by default)."""
    if not _E.backends.cuda.matmul.allow_tf32:
        return "highest"
    return "high" if _STATE["matmul_precision"] == "highest" else _STATE["matmul_precision"]


@_torch
def get_num_interop_threads():
    """The number set_num_interop_threads recorded (ember runs no inter-op thread pool)."""
    return _STATE["interop_threads"]


@_torch
def set_num_interop_threads(num):
    """Recorded only: ember runs no inter-op thread pool."""
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _STATE["interop_threads"] = int(num)


@_torch
def init_num_threads():
    """Nothing to do: ember sizes its thread pool at start."""


@_torch
def set_warn_always(b):
    """Recorded: ember's warnings follow Python's warnings filters."""
    _STATE["warn_always"] = builtins.bool(b)


@_torch
def is_warn_always_enabled():
    """The flag set_warn_always set."""
    return _STATE["warn_always"]


@_torch
def compiled_with_cxx11_abi():
    """True: ember is built with the C++11 ABI."""
    return True


@_torch
def set_anomaly_enabled(enabled, check_nan=True):
    """Records anomaly mode; ember's autograd does not check its backward passes for NaN."""
    if enabled and not _STATE["anomaly"]:
        warnings.warn("Anomaly Detection has been enabled, but ember's autograd records the flag "
                      "only: it does not check backward passes for NaN")
    _STATE["anomaly"] = builtins.bool(enabled)
    _STATE["anomaly_nan"] = builtins.bool(check_nan)


@_torch
def is_anomaly_enabled():
    """The flag detect_anomaly / set_detect_anomaly set."""
    return _STATE["anomaly"]


@_torch
def is_anomaly_check_nan_enabled():
    """The check_nan flag detect_anomaly / set_detect_anomaly set."""
    return _STATE["anomaly_nan"]


class _AnomalyMode:
    def __init__(self, mode=True, check_nan=True):
        self.prev = (_STATE["anomaly"], _STATE["anomaly_nan"])
        self.mode, self.check_nan = mode, check_nan

    def __enter__(self):
        set_anomaly_enabled(self.mode, self.check_nan)
        return self

    def __exit__(self, *exc):
        _STATE["anomaly"], _STATE["anomaly_nan"] = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.mode, self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class detect_anomaly(_AnomalyMode):
    """Anomaly mode in its scope, as a context manager or decorator (see set_anomaly_enabled)."""

    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly(_AnomalyMode):
    """Sets anomaly mode now, restored at the end of a `with` block."""

    def __init__(self, mode, check_nan=True):
        super().__init__(mode, check_nan)
        set_anomaly_enabled(mode, check_nan)


_AUTOGRAD.update(detect_anomaly=detect_anomaly, set_detect_anomaly=set_detect_anomaly)
_TORCH.update(e=math.e, pi=math.pi, inf=math.inf, nan=math.nan)

# ================================================================================================
# random number state
# ================================================================================================


@_torch
def get_rng_state():
    """The default generator's state as a uint8 tensor (its seed and offset, 16 bytes)."""
    state = _E.default_generator.get_state().numpy()  # int64 [seed, offset]
    return _E.from_numpy(state.view("uint8").copy())


@_torch
def set_rng_state(new_state):
    """Restores a state get_rng_state returned."""
    if not _is_tensor(new_state) or _dname(new_state.dtype) != "uint8":
        raise TypeError("RNG state must be a torch.ByteTensor")
    if new_state.numel() != 16:
        raise RuntimeError(f"[set_rng_state] expected the 16-byte state get_rng_state returns, "
                           f"got {new_state.numel()} bytes")
    raw = new_state.detach().cpu().contiguous().numpy().copy().view("int64")
    _E.default_generator.set_state(_E.from_numpy(raw))


@_torch
def seed():
    """Seeds the default generator from the OS's entropy and returns the seed."""
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    _E.manual_seed(s)
    return s


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Restores the random state on leaving the block (one generator serves every device)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def _make_random_module():
    m = types.ModuleType("ember.random", "ember.random: the default generator's seed and state "
                         "(torch.random).")
    m.manual_seed, m.initial_seed = _E.manual_seed, _E.initial_seed
    m.seed, m.get_rng_state, m.set_rng_state, m.fork_rng = (seed, get_rng_state, set_rng_state,
                                                            fork_rng)
    m.default_generator = _E.default_generator
    return m


# torch.cuda's seed functions: ember has one generator for every device (see manual_seed), so
# they act on it; a program that seeds both gets the same stream.
def _cuda_seed_functions():
    def manual_seed(seed):
        """Seeds the generator every device draws from."""
        _E.manual_seed(seed)

    def get_rng_state(device="cuda"):
        """The shared generator's state (see ember.get_rng_state)."""
        return _TORCH["get_rng_state"]()

    def set_rng_state(new_state, device="cuda"):
        """Restores the shared generator's state."""
        _TORCH["set_rng_state"](new_state)

    def get_rng_state_all():
        """One state per GPU, each the shared generator's."""
        return [get_rng_state() for _ in range(builtins.max(1, _E.cuda.device_count()))]

    def set_rng_state_all(new_states):
        """Restores the shared generator from the first state."""
        for s in new_states[:1]:
            set_rng_state(s)

    def cuda_seed():
        """Seeds the shared generator from the OS's entropy (ember.initial_seed() tells it)."""
        seed()

    return dict(manual_seed=manual_seed, manual_seed_all=manual_seed, seed=cuda_seed,
                seed_all=cuda_seed,
                initial_seed=_E.initial_seed, get_rng_state=get_rng_state,
                set_rng_state=set_rng_state, get_rng_state_all=get_rng_state_all,
                set_rng_state_all=set_rng_state_all)


def _cuda_misc():
    c = _E.cuda

    def is_initialized():
        """Whether a GPU is there (ember starts CUDA on first use, never half-way)."""
        return c.is_available()

    def init():
        """Nothing to do: ember starts CUDA on first use."""

    def is_bf16_supported():
        """Whether the current GPU computes in bfloat16 (compute capability 8.0 or newer)."""
        return c.is_available() and c.get_device_capability()[0] >= 8

    def get_arch_list():
        """The GPU architectures of this machine's devices (ember compiles for the one it has)."""
        if not c.is_available():
            return []
        return sorted({"sm_%d%d" % c.get_device_capability(i) for i in range(c.device_count())})

    def ipc_collect():
        """Nothing to collect: ember shares CUDA memory through its own IPC."""

    def device_of(obj):
        """The device scope of a tensor: `with ember.cuda.device_of(x): ...`."""
        return c.device(obj.get_device() if _is_tensor(obj) and obj.is_cuda else -1)

    from ._tensor import CUDA_TYPES
    out = dict(is_initialized=is_initialized, init=init, is_bf16_supported=is_bf16_supported,
               get_arch_list=get_arch_list, ipc_collect=ipc_collect, device_of=device_of,
               StreamContext=c.stream, has_half=True, max_memory_cached=c.max_memory_reserved,
               reset_max_memory_allocated=c.reset_peak_memory_stats,
               reset_max_memory_cached=c.reset_peak_memory_stats,
               reset_accumulated_memory_stats=c.reset_peak_memory_stats)
    out.update(CUDA_TYPES)
    return out


# ================================================================================================
# shapes: broadcasting, atleast_nd, splits, combinations
# ================================================================================================


@_torch
def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to (ints, tuples or lists)."""
    size = [1] * builtins.max([1 if isinstance(s, int) else len(s) for s in shapes] or [0])
    for shape in shapes:
        if isinstance(shape, int):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"({shape[i]}): ({shape[i]})")
            if shape[i] == 1 or shape[i] == size[i]:
                continue
            if size[i] != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
            size[i] = shape[i]
    return _E.Size(size)


@_torch
def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shape = broadcast_shapes(*shapes)
    except RuntimeError:
        raise RuntimeError(f"[broadcast_tensors] shapes {shapes} do not broadcast") from None
    return tuple(t.expand(shape) for t in tensors)


@_both
def broadcast_to(input, size):
    """input expanded (as a view) to size."""
    return input.expand(tuple(size))


def _atleast(tensors, n, name):
    if len(tensors) == 1:
        tensors = tensors[0]
    single = _is_tensor(tensors)
    seq = [tensors] if single else list(tensors)
    out = []
    for t in seq:
        if not _is_tensor(t):
            raise TypeError(f"{name}(): expected Tensors, got {type(t).__name__}")
        if t.dim() < n:
            if n == 3 and t.dim() == 2:
                t = t.unsqueeze(-1)
            elif n == 3 and t.dim() == 1:
                t = t.reshape(1, -1, 1)
            else:
                t = t.reshape((1,) * (n - builtins.max(t.dim(), 1)) + (tuple(t.shape) or (1,)))
        out.append(t)
    return out[0] if single else tuple(out)


@_torch
def atleast_1d(*tensors):
    """Each tensor with at least 1 dimension (0-d becomes (1,))."""
    return _atleast(tensors, 1, "atleast_1d")


@_torch
def atleast_2d(*tensors):
    """Each tensor with at least 2 dimensions ((n,) becomes (1, n))."""
    return _atleast(tensors, 2, "atleast_2d")


@_torch
def atleast_3d(*tensors):
    """Each tensor with at least 3 dimensions ((n,) becomes (1, n, 1), (m, n) becomes (m, n, 1))."""
    return _atleast(tensors, 3, "atleast_3d")


def _split_along(input, indices_or_sections, dim, name):
    if isinstance(indices_or_sections, int) and input.shape[dim] % indices_or_sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {indices_or_sections}!")
    return tuple(_E.tensor_split(input, indices_or_sections, dim))


@_both
def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for a 1-D input); sections must divide evenly."""
    if input.dim() < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a "
                           "tensor with 0 dimensions!")
    return _split_along(input, indices_or_sections, 1 if input.dim() > 1 else 0, "hsplit")


@_both
def vsplit(input, indices_or_sections):
    """tensor_split along dim 0; sections must divide evenly."""
    if input.dim() < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _split_along(input, indices_or_sections, 0, "vsplit")


@_both
def dsplit(input, indices_or_sections):
    """tensor_split along dim 2; sections must divide evenly."""
    if input.dim() < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _split_along(input, indices_or_sections, 2, "dsplit")


@_torch
def cartesian_prod(*tensors):
    """The rows of every combination of one element from each 1-D tensor (itertools.product)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = _E.meshgrid(list(tensors), indexing="ij")
    return _E.stack([g.reshape(-1) for g in grids], 1)


@_torch
def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements, one per row."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return input.new_empty(0, r)
    return input[_E.tensor(rows, device=input.device)]


@_torch
def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) as the blocks of a block-diagonal matrix."""
    if not tensors:
        return _E.empty(1, 0)
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1
                      else t)
    dtype = getattr(_E, functools.reduce(_promote, [_dname(b.dtype) for b in blocks]))
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to(dtype)
        right = width - left - b.shape[1]
        rows.append(_E.cat([b.new_zeros(b.shape[0], left), b, b.new_zeros(b.shape[0], right)], 1))
        left += b.shape[1]
    return _E.cat(rows, 0)


def _tri_indices(row, col, offset, dtype, device, upper):
    i = _E.arange(row, device=device).unsqueeze(1)
    j = _E.arange(col, device=device).unsqueeze(0)
    mask = (j - i >= offset) if upper else (j - i <= offset)
    return _E.nonzero(mask).t().to(dtype)


@_torch
def tril_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of a row x col matrix's lower triangle, row by row."""
    return _tri_indices(row, col, offset, dtype or _E.int64, device, upper=False)


@_torch
def triu_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of a row x col matrix's upper triangle, row by row."""
    return _tri_indices(row, col, offset, dtype or _E.int64, device, upper=True)


@_method
def sum_to_size(self, *size):
    """self summed over the dimensions where size is 1 (the inverse of expand)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self
    if lead:
        out = out.sum(list(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1]
    if dims:
        out = out.sum(dims, keepdim=True)
    return out



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


# ================================================================================================
# linear algebra made of matmuls
# ================================================================================================


@_both
def kron(input, other):
    """The Kronecker product: every element of input times the whole of other."""
    n = builtins.max(input.dim(), other.dim())
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    a_shape = [s for d in a.shape for s in (d, 1)]
    b_shape = [s for d in b.shape for s in (1, d)]
    prod = a.reshape(a_shape) * b.reshape(b_shape)
    return prod.reshape([x * y for x, y in zip(a.shape, b.shape)])


@_torch
def tensordot(a, b, dims=2, out=None):
    """Contracts a's and b's dims (the last `dims` of a with the first of b, or two lists)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        if _is_tensor(dims):
            dims = dims.tolist()
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [d % a.dim() for d in da]
    db = [d % b.dim() for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
        k *= a.shape[x]
    am = a.permute(*free_a, *da).reshape(-1, k)
    bm = b.permute(*db, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _out(am.mm(bm).reshape(shape), out)


@_both
def vdot(input, other):
    """The dot product of two 1-D tensors (no conjugate: ember is real)."""
    return _E.dot(input, other)


@_both
def matrix_power(input, n):
    """input (a square matrix or a batch of them) multiplied by itself n >= 0 times."""
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {input.shape[-2] if input.dim() > 1 else 1} by "
                           f"{input.shape[-1] if input.dim() else 1} matrices")
    if n < 0:
        raise NotImplementedError("[matrix_power] n < 0 needs a matrix inverse, which ember does "
                                  "not have yet")
    result, base = None, input
    while True:
        if n & 1:
            result = base if result is None else _E.matmul(result, base)
        n >>= 1
        if not n:
            break
        base = _E.matmul(base, base)
    if result is None:
        eye = _E.eye(input.shape[-1], dtype=input.dtype, device=input.device)
        return eye.expand(input.shape).clone()
    return result


@_torch
def chain_matmul(*matrices, out=None):
    """The product of the matrices, left to right (deprecated in PyTorch for linalg.multi_dot)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    return _out(functools.reduce(_E.mm, matrices), out)


@_torch
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance of each row of x1 to each of x2: (B, P, M), (B, R, M) -> (B, P, R)."""
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary"
        and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matmul instead of a (P, R, M) difference.
        sq1 = (x1 * x1).sum(-1, keepdim=True)
        sq2 = (x2 * x2).sum(-1, keepdim=True)
        d2 = sq1 - 2 * _E.matmul(x1, x2.transpose(-1, -2)) + sq2.transpose(-1, -2)
        pos = d2 > 0  # sqrt's gradient at 0 is infinite: 0 there, as PyTorch's cdist gives
        return _E.where(pos, _E.sqrt(_E.where(pos, d2, _E.ones_like(d2))), _E.zeros_like(d2))
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _E.norm(d, p, dim=-1)


@_torch
def pdist(input, p=2):
    """The p-norm distances between the rows of input, i < j, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    return _E.norm(input[i] - input[j], p, dim=-1)


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


def _bitwise(name, op):
    def fn(input, other, *, out=None):
        a, b = input, _as_tensor(other, input)
        for t in (a, b):
            if _dname(t.dtype) != "bool":
                raise NotImplementedError(f"[{name}] ember's bitwise ops take bool tensors only "
                                          f"yet, got {_dname(t.dtype)}")
        return _out(op(a, b), out)
    fn.__name__ = name
    fn.__doc__ = f"The elementwise {name[8:]} of bool tensors (integer bit ops need ember's C++)."
    return fn


for _n, _op in (("bitwise_and", lambda a, b: a & b), ("bitwise_or", lambda a, b: a | b),
                ("bitwise_xor", lambda a, b: a != b)):
    _both(_bitwise(_n, _op))


@_both
def bitwise_not(input, *, out=None):
    """~input: logical not for bool, -x - 1 for signed integers, 255 - x for uint8."""
    kind = _dname(input.dtype)
    if kind == "bool":
        return _out(~input, out)
    if _KIND[kind][0] != 1:
        raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{_legacy(input.dtype)}'")
    return _out(255 - input if kind == "uint8" else -input - 1, out)


# Special functions, computed in float64 and returned in the input's floating dtype. Their
# gradients come from autograd through the same formulas.
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7]


def _lgamma64(x):
    # Lanczos (g = 7) for x >= 0.5, the reflection formula below it.
    reflect = x < 0.5
    z = _E.where(reflect, 1 - x, x) - 1
    acc = _E.full_like(z, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], 1):
        acc = acc + c / (z + k)
    t = z + 7.5
    lg = 0.5 * math.log(2 * math.pi) + (z + 0.5) * _E.log(t) - t + _E.log(acc)
    sin = _E.sin(math.pi * _E.where(reflect, x, _E.full_like(x, 0.5))).abs()
    return _E.where(reflect, math.log(math.pi) - _E.log(sin) - lg, lg)


@_both
def lgamma(input, *, out=None):
    """log|Gamma(x)| (inf at 0 and the negative integers)."""
    x = _floating(input)
    r = _lgamma64(x.to(_E.float64))
    pole = (x <= 0) & (x == _E.floor(x))
    r = _E.where(pole, _E.full_like(r, math.inf), r)
    return _out(r.to(x.dtype), out)


def _digamma64(x):
    reflect = x < 0.5
    y = _E.where(reflect, 1 - x, x)
    shift = _E.zeros_like(y)
    for k in range(6):
        shift = shift + 1 / (y + k)
    z = y + 6
    iz2 = 1 / (z * z)
    series = iz2 * (1 / 12 - iz2 * (1 / 120 - iz2 * (1 / 252 - iz2 * (1 / 240 - iz2 / 132))))
    psi = _E.log(z) - 0.5 / z - series - shift
    tan = _E.tan(math.pi * _E.where(reflect, x, _E.full_like(x, 0.25)))
    return _E.where(reflect, psi - math.pi / tan, psi)


@_both
def digamma(input, *, out=None):
    """d/dx log Gamma(x) (-inf at 0, NaN at the negative integers)."""
    x = _floating(input)
    r = _digamma64(x.to(_E.float64))
    r = _E.where((x < 0) & (x == _E.floor(x)), _E.full_like(r, math.nan), r)
    r = _E.where(x == 0, _E.full_like(r, -math.inf), r)
    return _out(r.to(x.dtype), out)


@_both
def erfinv(input, *, out=None):
    """The inverse of erf on (-1, 1): +-inf at +-1, NaN outside."""
    y = _floating(input)
    y64 = y.to(_E.float64)
    inside = y64.abs() < 1
    ys = _E.where(inside, y64, _E.zeros_like(y64))
    # Giles' single-precision approximation, then two Newton steps on erf(x) = y.
    w = -_E.log((1 - ys.detach()) * (1 + ys.detach()))
    wc, wt = w - 2.5, _E.sqrt(w) - 3
    pc = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
          -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
    pt = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
          -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]
    a, b = _E.full_like(w, pc[0]), _E.full_like(w, pt[0])
    for c, t in zip(pc[1:], pt[1:]):
        a, b = a * wc + c, b * wt + t
    x = (_E.where(w < 5, a, b) * ys).detach()
    for _ in range(2):
        x = x - (_E.erf(x) - ys) / (2 / math.sqrt(math.pi) * _E.exp(-x * x))
    y_const = y64.detach()
    edge = _E.where(y_const.abs() == 1, y_const * math.inf, _E.full_like(y_const, math.nan))
    return _out(_E.where(inside, x, edge).to(y.dtype), out)


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
    out = lgamma(x.unsqueeze(-1) - _E.arange(p, dtype=x.dtype, device=x.device) / 2).sum(-1)
    return out + p * (p - 1) / 4 * math.log(math.pi)


@_both
def angle(input, *, out=None):
    """The complex argument of real numbers: pi below 0, else 0 (NaN stays NaN)."""
    x = _floating(input)
    a = _E.where(x < 0, _E.full_like(x, math.pi), _E.zeros_like(x))
    return _out(_E.where(_E.isnan(x), x, a), out)


@_both
def adjoint(input):
    """The conjugate transpose of the last two dims: their transpose, as ember is real."""
    return input.transpose(-2, -1)


_histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])


@_both
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of input's values in `bins` equal bins over range (or given edges)."""
    if not input.is_floating_point():
        raise RuntimeError(f"\"histogramdd\" not implemented for '{_legacy(input.dtype)}'")
    x = input.reshape(-1)
    if _is_tensor(bins):
        edges = bins.to(input.dtype)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = x.min().item(), x.max().item()
        else:
            lo, hi = 0.0, 0.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _E.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    n = edges.numel() - 1
    # The bin of each value: edges[i] <= x < edges[i + 1], the last bin closed on the right.
    idx = _E.bucketize(x, edges, right=True) - 1
    idx = _E.where(x == edges[-1], _E.full_like(idx, n - 1), idx)
    keep = (idx >= 0) & (idx < n)
    w = _E.ones_like(x) if weight is None else weight.reshape(-1).to(input.dtype)
    hist = _E.zeros(n, dtype=input.dtype, device=input.device).index_add(
        0, idx[keep], w[keep])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _histogram(hist, edges)


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


# ================================================================================================
# Tensor conveniences
# ================================================================================================


@_method
def to_dense(self, dtype=None):
    """self (in dtype): ember's tensors are dense already."""
    return self if dtype is None else self.to(dtype)


@_method
def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fills self with exp of N(mean, std) samples."""
    return self.normal_(mean, std, generator=generator).exp_()


@_method
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fills self with Cauchy(median, sigma) samples."""
    u = _E.empty_like(self, dtype=_E.float64).uniform_(generator=generator)
    return self.copy_(median + sigma * _E.tan(math.pi * (u - 0.5)))


@_method
def geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    u = _E.empty_like(self, dtype=_E.float64).uniform_(generator=generator)
    return self.copy_(_E.ceil(_E.log1p(-u) / math.log1p(-p)).clamp(min=1))


@_method
def is_same_size(self, other):
    """Whether self and other have the same shape."""
    return tuple(self.shape) == tuple(other.shape)


@_method
def is_set_to(self, tensor):
    """Whether self and tensor view the same memory with the same shape and strides."""
    return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
            and self.stride() == tensor.stride() and self.device == tensor.device)


@_method
def apply_(self, callable):
    """Replaces each element x of a CPU tensor by callable(x), in Python (slow, as PyTorch's)."""
    if self.is_cuda:
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    with _E.no_grad():
        self.copy_(_E.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


@_method
def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal; wrap restarts it every N+1 rows of a tall matrix."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    shape = tuple(self.shape)
    strides = [1] * len(shape)  # row-major strides of a contiguous copy
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    step, size = builtins.sum(strides), builtins.min(shape)
    positions = [k * step for k in range(size)]
    height, width = shape[0], shape[-1]
    if wrap and self.dim() == 2 and height > width + 1:
        wrap_size = (self.numel() + step - 1) // step - size
        start = strides[0] * (width + 1)
        positions += [start + k * step for k in range(wrap_size)]
    idx = _E.tensor(positions, dtype=_E.int64, device=self.device)
    if self.is_contiguous():
        self.view(-1)[idx] = fill_value
    else:
        flat = self.contiguous().view(-1)
        flat[idx] = fill_value
        self.copy_(flat.view(shape))
    return self


def _linear_index(self, indices):
    """Long index tensors (bool masks expanded, negatives wrapped) over self's leading dims, as one
    index into self viewed as (prod(leading dims), *rest)."""
    longs = []
    for idx in indices:
        if _dname(idx.dtype) in ("bool", "uint8"):
            longs.extend(_E.nonzero(idx.bool()).unbind(1))
        else:
            longs.append(idx)
    if len(longs) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    longs = broadcast_tensors(*longs)
    lin = None
    for d, idx in enumerate(longs):
        idx = _E.where(idx < 0, idx + self.shape[d], idx)
        lin = idx if lin is None else lin * self.shape[d] + idx
    return lin, len(longs)


@_method
def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (or += with accumulate, adding duplicates up), in place."""
    indices = tuple(indices)
    if not accumulate:
        self[indices] = values
        return self
    lin, k = _linear_index(self, indices)
    rest = tuple(self.shape[k:])
    flat_shape = (-1,) + rest
    src = _as_tensor(values, self).to(self.dtype).expand(tuple(lin.shape) + rest).reshape(
        flat_shape)
    if self.is_contiguous():
        self.view(flat_shape).index_add_(0, lin.reshape(-1), src)
    else:
        flat = self.contiguous().view(flat_shape)
        flat.index_add_(0, lin.reshape(-1), src)
        self.copy_(flat.view(self.shape))
    return self


@_both
def index_put(input, indices, values, accumulate=False):
    """input with input[indices] = values (or += with accumulate), out of place."""
    return index_put_(input.clone(), indices, values, accumulate)


@_method
def put_(self, index, source, accumulate=False):
    """Writes source at the flat (row-major) positions index, in place (+= with accumulate)."""
    flat = self.reshape(-1) if self.is_contiguous() else self.contiguous().reshape(-1)
    index_put_(flat, (index.reshape(-1),), source.reshape(-1), accumulate)
    if flat.data_ptr() != self.data_ptr():
        self.copy_(flat.view(self.shape))
    return self


@_both
def put(input, index, source, accumulate=False):
    """input with source written at the flat positions index, out of place."""
    return put_(input.clone(), index, source, accumulate)


@_both
def index_fill(input, dim, index, value):
    """input with the slices at index along dim set to value, out of place."""
    return input.clone().index_fill_(dim, index, value)


@_both
def masked_scatter(input, mask, source):
    """input with the positions where mask is True taken, in order, from source."""
    input, mask = broadcast_tensors(input, mask)
    return input.clone().masked_scatter_(mask, source)


@_method
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """Reduces src into self at index along dim, in place: reduce 'sum' or 'mean'."""
    if reduce not in ("sum", "mean"):
        raise NotImplementedError(f"[scatter_reduce] reduce='{reduce}' is not supported by ember "
                                  "yet (only 'sum' and 'mean')")
    if not include_self:
        ones = _E.ones_like(src, dtype=self.dtype)
        hit = _E.zeros_like(self).scatter_(dim, index, ones) != 0
        self.masked_fill_(hit, 0)
    count = None
    if reduce == "mean":
        count = _E.zeros_like(self).scatter_add_(dim, index, _E.ones_like(src, dtype=self.dtype))
        if include_self:
            count = count + 1
    self.scatter_add_(dim, index, src.to(self.dtype))
    if count is not None:
        count = _E.where(count == 0, _E.ones_like(count), count)
        result = self / count if self.is_floating_point() else _E.div(self, count,
                                                                      rounding_mode="floor")
        self.copy_(result)
    return self


@_both
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src reduced in at index along dim ('sum' or 'mean'), out of place."""
    return scatter_reduce_(input.clone(), dim, index, src, reduce, include_self=include_self)


@_both
def unsafe_chunk(input, chunks, dim=0):
    """chunk (ember's views carry no unsafe variant)."""
    return input.chunk(chunks, dim)


@_both
def unsafe_split(tensor, split_size_or_sections, dim=0):
    """split (ember's views carry no unsafe variant)."""
    return tensor.split(split_size_or_sections, dim)


@_both
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes (ember's views carry no unsafe variant)."""
    return input.split_with_sizes(split_sizes, dim)


@_both
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2) (input ignored when beta is 0)."""
    prod = _E.outer(vec1, vec2)
    prod = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return _out(prod.expand(broadcast_shapes(input.shape, prod.shape)).clone(), out)
    return _out(prod + (input if beta == 1 else input * beta), out)


@_both
def resolve_neg(input):
    """input itself: ember has no lazy negation."""
    return input


@_both
def resolve_conj(input):
    """input itself: ember has no complex dtypes to conjugate."""
    return input


@_both
def is_neg(input):
    """False: ember has no lazy negation."""
    return False


@_both
def is_conj(input):
    """False: ember has no complex dtypes."""
    return False


@_both
def is_inference(input):
    """False: ember's inference mode makes ordinary tensors."""
    return False


@_both
def is_distributed(input):
    """False (the old THD flag PyTorch still reports)."""
    return False


@_torch
def real(input):
    """input itself: ember's tensors are real."""
    return input


@_torch
def imag(input):
    """Raises as PyTorch does on a real tensor."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


@_torch
def get_device(input):
    """input's GPU index, or -1 on the CPU."""
    return input.get_device()


_PROPS.update(
    real=property(lambda self: self, doc="self: ember's tensors are real."),
    imag=property(lambda self: imag(self), doc="Raises: ember's tensors are real."),
    is_meta=property(lambda self: False, doc="False: ember has no meta tensors."),
    is_xpu=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_ipu=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_mps=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_ort=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_mkldnn=property(lambda self: False, doc="False: ember has no MKL-DNN layout."),
    is_sparse=property(lambda self: False, doc="False: ember has no sparse layouts."),
    is_quantized=property(lambda self: False, doc="False: ember has no quantized dtypes."),
    names=property(lambda self: (None,) * self.dim(), doc="None per dim: no named dims."),
)


@_method
def has_names(self):
    """False: ember has no named dimensions."""
    return False


def _inplace(name):
    """Tensor.name_: self = name(self, ...) in place; the result's dtype must cast to self's."""
    def method(self, *args, **kwargs):
        fn = getattr(_E, name, None) or getattr(_E.Tensor, name)
        result = fn(self, *args, **kwargs)
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_legacy(result.dtype)} can't be cast to the desired "
                               f"output type {_legacy(self.dtype)}")
        self.copy_(result)
        return self
    method.__name__ = name + "_"
    method.__doc__ = f"In-place {name}."
    return method


_INPLACE = """eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and
    logical_or logical_xor cumprod atan2 arctan2 hypot copysign xlogy logit heaviside sinc gcd lcm
    ldexp lgamma digamma erfinv mvlgamma renorm addmm addbmm baddbmm addmv addr bitwise_and
    bitwise_or bitwise_xor bitwise_not""".split()


@_method
def float_power_(self, exponent):
    """In-place float_power: self must be float64 (the result's dtype)."""
    if _dname(self.dtype) != "float64":
        raise RuntimeError(f"the base given to float_power_ has dtype {_legacy(self.dtype)} but "
                           "the operation's result requires dtype Double")
    return self.copy_(_E.float_power(self, exponent))


# ================================================================================================
# torch.* functions that are nn.functional's (PyTorch has both)
# ================================================================================================

_FROM_F = """conv1d conv2d conv_transpose1d conv_transpose2d avg_pool1d max_pool1d max_pool2d
    adaptive_avg_pool1d pixel_shuffle pixel_unshuffle prelu selu celu
    cosine_similarity pairwise_distance bilinear hardshrink rrelu channel_shuffle threshold
    threshold_ selu_ celu_ rrelu_""".split()

# torch.name(input, ...) for the Tensor methods that PyTorch also has as functions.
_FROM_TENSOR = """xlogy_ logit_ sinc_ gcd_ lcm_ ldexp_ round_ nan_to_num_ clamp_min_ clamp_max_
    detach_ zero_ fill_ index_put_ is_same_size addmv_""".split()


@_torch
def fill(input, value):
    """A tensor like input filled with value."""
    return input.clone().fill_(value)


def _torch_norms():
    F = _E.nn.functional

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                   cudnn_enable=True):
        """F.layer_norm (cudnn_enable is ignored)."""
        return F.layer_norm(input, normalized_shape, weight, bias, eps)

    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
        """F.group_norm (cudnn_enabled is ignored)."""
        return F.group_norm(input, num_groups, weight, bias, eps)

    def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                   cudnn_enabled):
        """F.batch_norm with ATen's argument order."""
        return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)

    def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                      eps, cudnn_enabled):
        """F.instance_norm with ATen's argument order."""
        return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                               momentum, eps)

    def dropout(input, p, train):
        """F.dropout with ATen's argument names."""
        return F.dropout(input, p, train)

    def alpha_dropout(input, p, train):
        """F.alpha_dropout with ATen's argument names."""
        return F.alpha_dropout(input, p, train)

    def adaptive_max_pool1d(input, output_size):
        """(values, indices) of F.adaptive_max_pool1d."""
        return tuple(F.adaptive_max_pool1d(input, output_size, True))

    def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                                ceil_mode=False):
        """(values, indices) of F.max_pool1d."""
        return tuple(F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                                  ceil_mode, True))

    def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
        """F.embedding with ATen's argument order."""
        return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                           scale_grad_by_freq=scale_grad_by_freq)

    return dict(layer_norm=layer_norm, group_norm=group_norm, batch_norm=batch_norm,
                instance_norm=instance_norm, dropout=dropout, alpha_dropout=alpha_dropout,
                adaptive_max_pool1d=adaptive_max_pool1d,
                max_pool1d_with_indices=max_pool1d_with_indices, embedding=embedding)


# ================================================================================================
# nn.functional
# ================================================================================================


def _inplace_f(name):
    def fn(input, *args, **kwargs):
        kwargs.pop("inplace", None)
        return input.copy_(getattr(_E.nn.functional, name)(input, *args, **kwargs))
    fn.__name__ = name + "_"
    fn.__doc__ = f"In-place F.{name}."
    return fn


for _n in ("relu", "leaky_relu", "elu", "hardtanh", "selu", "celu", "threshold", "rrelu"):
    _F[_n + "_"] = _inplace_f(_n)


@_functional
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _E.where(input.abs() > lambd, input, _E.zeros_like(input))


_TENSOR["hardshrink"] = hardshrink


@_functional
def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    zero = _E.zeros_like(input)
    return _E.where(input > lambd, input - lambd, _E.where(input < -lambd, input + lambd, zero))


@_functional
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU, its slope drawn from U(lower, upper) per element in training, else their mean."""
    if training:
        slope = _E.empty_like(input).uniform_(lower, upper)
        out = _E.where(input >= 0, input, input * slope)
    else:
        out = _E.nn.functional.leaky_relu(input, (lower + upper) / 2)
    return input.copy_(out) if inplace else out


@_functional
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution; one-hot (with the soft gradient) if hard."""
    gumbels = -_E.empty_like(logits).exponential_().log()
    y = _E.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = _E.zeros_like(logits).scatter_(dim, index, _E.ones_like(index, dtype=logits.dtype))
    return y_hard - y.detach() + y


@_functional
def channel_shuffle(input, groups):
    """(N, C, *) with its channels regrouped: C = g * k channels read in k-major order."""
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


@_functional
def upsample_nearest(input, size=None, scale_factor=None):
    """F.interpolate(mode='nearest') (deprecated in PyTorch)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.")
    return _E.nn.functional.interpolate(input, size, scale_factor, mode="nearest")


@_functional
def upsample_bilinear(input, size=None, scale_factor=None):
    """F.interpolate(mode='bilinear', align_corners=True) (deprecated in PyTorch)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.")
    return _E.nn.functional.interpolate(input, size, scale_factor, mode="bilinear",
                                        align_corners=True)


_F["pdist"] = pdist


@_functional
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) for a distance d (pairwise_distance by default)."""
    dist_fn = distance_function or _E.nn.functional.pairwise_distance
    d_pos, d_neg = dist_fn(anchor, positive), dist_fn(anchor, negative)
    if swap:
        d_neg = _E.minimum(d_neg, dist_fn(positive, negative))
    loss = _E.clamp(d_pos - d_neg + margin, min=0)
    return _reduce(loss, reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_functional
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])**p / C."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() > 1 else input.unsqueeze(0)
    y = target.reshape(-1, 1)
    picked = x.gather(1, y)
    loss = _E.clamp(margin - picked + x, min=0)
    if p == 2:
        loss = loss * loss
    if weight is not None:
        loss = loss * weight[y]
    loss = loss.scatter(1, y, _E.zeros_like(picked)).sum(1) / x.shape[1]
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_functional
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The power-average pool: (sum over each window of x**p) ** (1/p)."""
    F = _E.nn.functional
    out = F.avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_E.sign(out) * F.relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


@_functional
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The 2-D power-average pool: (sum over each window of x**p) ** (1/p)."""
    F = _E.nn.functional
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = F.avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_E.sign(out) * F.relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@_functional
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), one column per sliding window."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    if ph or pw:
        x = _E.nn.functional.pad(x, (pw, pw, ph, ph))
    eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1  # the dilated kernel's extent
    patches = x.unfold(2, eh, sh).contiguous().unfold(3, ew, sw)  # (N, C, oh, ow, eh, ew)
    patches = patches[..., ::dh, ::dw]
    n, c, oh, ow = patches.shape[:4]
    cols = patches.permute(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    return cols if batched else cols.squeeze(0)


@_functional
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: (N, C * kh * kw, L) summed back into (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    (H, W), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(
        _pair, (output_size, kernel_size, dilation, padding, stride))
    hp, wp = H + 2 * ph, W + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    n, ck, L = x.shape
    if ck % (kh * kw) or L != oh * ow:
        raise RuntimeError(f"[fold] expected input of shape (N, C * {kh * kw}, {oh * ow}), got "
                           f"{list(input.shape)}")
    c = ck // (kh * kw)
    # The padded-image position of each (kernel row, kernel col, window) entry.
    ki = _E.arange(kh).reshape(kh, 1, 1, 1) * dh
    kj = _E.arange(kw).reshape(1, kw, 1, 1) * dw
    oi = _E.arange(oh).reshape(1, 1, oh, 1) * sh
    oj = _E.arange(ow).reshape(1, 1, 1, ow) * sw
    pos = ((ki + oi) * wp + (kj + oj)).reshape(-1).to(input.device)
    out = _E.zeros(n, c, hp * wp, dtype=input.dtype, device=input.device)
    out = _E.index_add(out, 2, pos, x.reshape(n, c, -1))
    out = out.reshape(n, c, hp, wp)[:, :, ph:ph + H, pw:pw + W]
    return out if batched else out.squeeze(0)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    s = k if stride is None else ((stride,) * nd if isinstance(stride, int) else tuple(stride))
    p = (padding,) * nd if isinstance(padding, int) else tuple(padding)
    spatial = tuple(input.shape[-nd:])
    if output_size is None:
        size = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    else:
        size = tuple(output_size)[-nd:]
    lead = tuple(input.shape[:-nd])
    n = 1
    for v in size:
        n *= v
    flat = input.reshape(lead + (-1,))
    out = _E.zeros(lead + (n,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, indices.reshape(lead + (-1,)), flat)
    return out.reshape(lead + size)


@_functional
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d's partial inverse: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@_functional
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool2d's partial inverse: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def _with_indices(name):
    def fn(*args, **kwargs):
        kwargs["return_indices"] = True
        return getattr(_E.nn.functional, name)(*args, **kwargs)
    fn.__name__ = name + "_with_indices"
    fn.__doc__ = f"F.{name}(..., return_indices=True): (output, indices)."
    return fn


for _n in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"):
    _F[_n + "_with_indices"] = _with_indices(_n)


def _grid_align_warning(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for "
                      "details.")
        return False
    return align_corners


def _base_coords(n, align_corners, like):
    if n <= 1:
        return _E.zeros(n, dtype=like.dtype, device=like.device)
    r = _E.linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * (n - 1) / n


@_functional
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of affine transforms theta (N, 2, 3) for size (N, C, H, W) (or 3-D)."""
    align_corners = _grid_align_warning(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    spatial = size[2:]
    nd = len(spatial)
    if nd not in (2, 3) or tuple(theta.shape[1:]) != (nd, nd + 1) or theta.shape[0] != size[0]:
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for "
                         f"size {size}. Got {list(theta.shape)}.")
    axes = [_base_coords(s, align_corners, theta) for s in reversed(spatial)]  # x, y[, z]
    grids = _E.meshgrid(list(reversed(axes)), indexing="ij")  # [z,] y, x on (D,) H, W
    coords = list(reversed(grids)) + [_E.ones_like(grids[0])]
    base = _E.stack(coords, -1).reshape(1, -1, nd + 1)
    grid = _E.matmul(base, theta.transpose(1, 2))
    return grid.reshape([size[0]] + spatial + [nd])


def _reflect(coord, lo, hi):
    # Reflects coordinates into [lo, hi] as grid_sample's 'reflection' padding does.
    span = hi - lo
    if span <= 0:
        return _E.zeros_like(coord)
    x = (coord - lo).abs()
    extra = _E.fmod(x, span)
    flips = _E.floor(x / span)
    even = _E.remainder(flips, 2) == 0
    return _E.where(even, extra + lo, span - extra + lo)


def _source_index(coord, size, padding_mode, align_corners):
    x = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "border":
        x = _E.clamp(x, 0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, size - 1) if align_corners else _reflect(x, -0.5, size - 0.5)
        x = _E.clamp(x, 0, size - 1)
    return x


@_functional
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at grid's (N, Ho, Wo, 2) points (x, y in [-1, 1])."""
    align_corners = _grid_align_warning(align_corners)
    if input.dim() != 4:
        raise NotImplementedError("[grid_sample] ember supports 4-D input (N, C, H, W) only")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"[grid_sample] mode '{mode}' is not supported by ember yet")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    ix = _source_index(grid[..., 0], w, padding_mode, align_corners)
    iy = _source_index(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(yy, xx, weight):
        inside = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        lin = (_E.clamp(yy, 0, h - 1) * w + _E.clamp(xx, 0, w - 1)).to(_E.int64)
        vals = flat.gather(2, lin.reshape(n, 1, -1).expand(n, c, ho * wo))
        weight = _E.where(inside, weight, _E.zeros_like(weight)).reshape(n, 1, -1)
        return vals * weight

    if mode == "nearest":
        xn, yn = _E.round(ix), _E.round(iy)
        out = tap(yn, xn, _E.ones_like(ix))
    else:
        x0, y0 = _E.floor(ix), _E.floor(iy)
        x1, y1 = x0 + 1, y0 + 1
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = (tap(y0, x0, wy0 * wx0) + tap(y0, x1, wy0 * wx1) + tap(y1, x0, wy1 * wx0)
               + tap(y1, x1, wy1 * wx1))
    return out.reshape(n, c, ho, wo)


# ================================================================================================
# install
# ================================================================================================


def _add(target, name, value):
    if not hasattr(target, name):
        setattr(target, name, value)


def install(ember):
    """Adds the names above to ember and its Tensor, nn.functional, cuda, autograd, return_types."""
    global _E
    _E = ember
    T = ember.Tensor
    for name, wrap in _WRAPPED:
        original = getattr(T, name)
        if not getattr(original, "_ember_compat", False):
            _ORIGINAL[name] = original
            method = wrap(original)
            method._ember_compat = True
            setattr(T, name, method)
    for name, value in _TORCH.items():
        _add(ember, name, value)
    for name, fn in _TENSOR.items():
        _add(T, name, fn)
    for name, prop in _PROPS.items():
        _add(T, name, prop)
    for name in _INPLACE:
        _add(T, name + "_", _inplace(name))
    F = ember.nn.functional
    for name, fn in _F.items():
        _add(F, name, fn)
    for name in _FROM_F:
        if hasattr(F, name):
            _add(ember, name, getattr(F, name))
    for name in _FROM_TENSOR:
        if hasattr(T, name):
            _add(ember, name, getattr(T, name))
    flags = dict(has_cuda=ember.cuda.is_built(), has_mkl=False, has_lapack=False,
                 has_spectral=False, has_openmp=ember.backends.openmp.is_available())
    for name, value in flags.items():
        _add(ember, name, value)
    for name, fn in _torch_norms().items():
        _add(ember, name, fn)
    _add(ember, "random", _make_random_module())
    sys.modules.setdefault("ember.random", ember.random)
    for name, fn in {**_cuda_seed_functions(), **_cuda_misc()}.items():
        _add(ember.cuda, name, fn)
    for name, value in _AUTOGRAD.items():
        _add(ember.autograd, name, value)
    _add(ember.return_types, "histogram", _histogram)
