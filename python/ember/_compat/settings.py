"""Global switches: printing, determinism, precision, threads, anomaly mode. Part of ember._compat
(see its __init__)."""
import builtins
import functools
import math
import warnings

from ._registry import _AUTOGRAD, _TORCH, _torch

_E = None  # the ember module, set by install()


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
# autocast's state, under torch's names (ember.amp holds it)
# ================================================================================================


@_torch
def get_autocast_dtype(device_type):
    """The dtype autocast casts to on device_type ('cpu' or 'cuda')."""
    return _E.amp.get_autocast_dtype(device_type)


@_torch
def get_autocast_cpu_dtype():
    """get_autocast_dtype('cpu')."""
    return _E.amp.get_autocast_dtype("cpu")


@_torch
def get_autocast_gpu_dtype():
    """get_autocast_dtype('cuda')."""
    return _E.amp.get_autocast_dtype("cuda")


@_torch
def is_autocast_cpu_enabled():
    """Whether autocast is on for the CPU on this thread."""
    return _E.amp.is_autocast_enabled("cpu")


for _n in ("clear_autocast_cache", "is_autocast_cache_enabled", "set_autocast_cache_enabled"):
    _TORCH[_n] = (lambda n: lambda *a, **k: getattr(_E.amp, n)(*a, **k))(_n)
    _TORCH[_n].__name__ = _n


def _autocast_device(args, name):
    """(device_type, value) from PyTorch 1.13's (value) for CUDA or 2.x's (device_type, value)."""
    if len(args) == 2:
        return args
    if len(args) == 1:
        return "cuda", args[0]
    raise TypeError(f"{name}() takes (value) or (device_type, value), got {len(args)} arguments")


@_torch
def set_autocast_enabled(*args):
    """Switches autocast on or off for CUDA (1.13) or for device_type (2.x: (device_type,
    enabled)) on this thread, outside any autocast region's bookkeeping."""
    device_type, enabled = _autocast_device(args, "set_autocast_enabled")
    _E.amp.set_autocast_enabled(device_type, enabled)


@_torch
def set_autocast_dtype(device_type, dtype):
    """The dtype autocast casts to on device_type (PyTorch 2.4)."""
    _E.amp.set_autocast_dtype(device_type, dtype)


def _deprecated_autocast_accessor(name, device_type, replacement, call):
    def accessor(*args):
        warnings.warn(f"torch.{name}() is deprecated. Please use torch.{replacement}"
                      f"('{device_type}'{', ...' if args else ''}) instead.", DeprecationWarning,
                      stacklevel=2)
        return call(device_type, *args)
    accessor.__name__ = accessor.__qualname__ = name
    accessor.__doc__ = f"{replacement}('{device_type}', ...), as PyTorch 2.x's deprecated alias."
    _TORCH[name] = accessor


# PyTorch 2.x's per-device aliases for devices ember has no backend for; their state lives in
# ember.amp beside CUDA's and the CPU's.
for _dev in ("ipu", "xla"):
    _deprecated_autocast_accessor(f"is_autocast_{_dev}_enabled", _dev, "is_autocast_enabled",
                                  lambda d: _E.amp.is_autocast_enabled(d))
    _deprecated_autocast_accessor(f"set_autocast_{_dev}_enabled", _dev, "set_autocast_enabled",
                                  lambda d, on: _E.amp.set_autocast_enabled(d, on))
    _deprecated_autocast_accessor(f"get_autocast_{_dev}_dtype", _dev, "get_autocast_dtype",
                                  lambda d: _E.amp.get_autocast_dtype(d))
    _deprecated_autocast_accessor(f"set_autocast_{_dev}_dtype", _dev, "set_autocast_dtype",
                                  lambda d, t: _E.amp.set_autocast_dtype(d, t))
del _dev


@_torch
def set_autocast_cpu_enabled(enabled):
    """set_autocast_enabled('cpu', enabled)."""
    _E._C._amp.set_autocast_enabled("cpu", bool(enabled))


@_torch
def set_autocast_cpu_dtype(dtype):
    """set_autocast_dtype('cpu', dtype)."""
    _E._C._amp.set_autocast_dtype("cpu", dtype)


@_torch
def set_autocast_gpu_dtype(dtype):
    """set_autocast_dtype('cuda', dtype)."""
    _E._C._amp.set_autocast_dtype("cuda", dtype)


@_torch
def is_vulkan_available():
    """False: ember has no Vulkan backend."""
    return False



for _n in ("autocast_increment_nesting", "autocast_decrement_nesting"):
    _TORCH[_n] = (lambda n: lambda: getattr(_E.amp, n)())(_n)
    _TORCH[_n].__name__ = _n


@_torch
def get_device_module(device=None):
    """The module of a device type: ember.cuda for 'cuda', ember.cpu for 'cpu'; with no device,
    the current accelerator's (ember.cuda when CUDA is available, else ember.cpu)."""
    if device is None:
        kind = "cuda" if _E.cuda.is_available() else "cpu"
    else:
        kind = device.type if isinstance(device, _E.device) else str(device).split(":")[0]
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'ember.{kind}'.")
    return getattr(_E, kind)


@_torch
def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands) (torch.cond, run eagerly); pred is a
    bool or a one-element tensor."""
    if _E.is_tensor(pred):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred.item())
    return true_fn(*operands) if pred else false_fn(*operands)
