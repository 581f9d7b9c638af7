"""ember.amp: mixed precision, torch.autocast's and GradScaler's names.

    with ember.autocast("cpu"):                  # bfloat16 on the CPU, float16 on CUDA
        loss = F.cross_entropy(model(x), y)      # conv/linear in the low dtype, the loss in float32
    scaler.scale(loss).backward()                # float16: scale, step (skips on inf/NaN), update
    scaler.step(opt); scaler.update()

The op lists are PyTorch 1.13's (ember/ops/autocast.h); the state is per thread, and DataParallel's
replicas and DataLoader workers carry their caller's."""
import contextlib
import functools
import threading

from . import _C

_a = _C._amp
is_autocast_cache_enabled = _a.is_autocast_cache_enabled
set_autocast_cache_enabled = _a.set_autocast_cache_enabled
clear_autocast_cache = _a.clear_autocast_cache


# Device types ember has no backend for keep autocast's state all the same, per thread with
# PyTorch's default dtypes, as PyTorch does on a machine without them: a program that sets and
# reads it (torch.set_autocast_enabled('xla', ...)) runs, and no ember op ever consults it.
_FOREIGN_DTYPES = {"xla": "bfloat16", "ipu": "float16", "xpu": "bfloat16", "hpu": "bfloat16",
                   "mps": "float16"}
_foreign = threading.local()


def _foreign_state(device_type):
    states = getattr(_foreign, "states", None)
    if states is None:
        states = _foreign.states = {}
    if device_type not in states:
        states[device_type] = [False, getattr(_C, _FOREIGN_DTYPES[device_type])]
    return states[device_type]


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for device_type on this thread (torch.is_autocast_enabled: cuda)."""
    if device_type in _FOREIGN_DTYPES:
        return _foreign_state(device_type)[0]
    return _a.is_autocast_enabled(device_type)


def get_autocast_dtype(device_type):
    if device_type in _FOREIGN_DTYPES:
        return _foreign_state(device_type)[1]
    return _a.get_autocast_dtype(device_type)


def set_autocast_enabled(device_type, enabled):
    if device_type in _FOREIGN_DTYPES:
        _foreign_state(device_type)[0] = bool(enabled)
    else:
        _a.set_autocast_enabled(device_type, bool(enabled))


def set_autocast_dtype(device_type, dtype):
    if device_type in _FOREIGN_DTYPES:
        _foreign_state(device_type)[1] = dtype
    else:
        _a.set_autocast_dtype(device_type, dtype)


_nesting = threading.local()  # this thread's depth of autocast regions


def autocast_increment_nesting():
    """One autocast region deeper on this thread; returns the depth
    (torch.autocast_increment_nesting)."""
    _nesting.depth = getattr(_nesting, "depth", 0) + 1
    return _nesting.depth


def autocast_decrement_nesting():
    """One region shallower; returns the depth (0: outside every region, where the cast cache
    is cleared, as PyTorch's autocast does on leaving its outermost region)."""
    _nesting.depth = max(getattr(_nesting, "depth", 0) - 1, 0)
    if _nesting.depth == 0:
        clear_autocast_cache()
    return _nesting.depth


class autocast(contextlib.ContextDecorator):
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager
    and a decorator. Regions nest; enabled=False switches autocast off inside one."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device_type, self.fast_dtype = device_type, dtype
        self._args = (device_type, dtype, enabled, cache_enabled)
        self._regions = []  # one per entry, so a decorated function may recurse

    def __enter__(self):
        region = _a._AutocastRegion(*self._args)
        region.__enter__()
        self._regions.append(region)
        autocast_increment_nesting()
        return self

    def __exit__(self, *exc):
        self._regions.pop().__exit__(*exc)
        autocast_decrement_nesting()
        return False

    def _recreate_cm(self):
        return autocast(*self._args)


class GradScaler(_a.GradScaler):
    """torch.amp.GradScaler (PyTorch 2.3's signature, the device first) on any device:
    scale(loss).backward(), step(optimizer) (unscales, skips the step when a gradient holds an
    inf or NaN), update() (backs off or grows the scale). unscale_(optimizer) first to clip
    gradients. ember's scaler works on every device, so a "cuda" scaler on the CPU stays
    enabled (PyTorch's disables itself there)."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__(init_scale, growth_factor, backoff_factor, growth_interval, enabled)
        self._device = str(device)

    def step(self, optimizer, *args, **kwargs):
        """Steps the optimizer unless its gradients hold an inf or NaN; returns what
        optimizer.step returned (None when skipped), as PyTorch does."""
        if args or kwargs:
            raise TypeError("GradScaler.step: closures are not supported (as in PyTorch)")
        self._step(optimizer)

    def state_dict(self):
        """{'scale', 'growth_factor', 'backoff_factor', 'growth_interval', '_growth_tracker'}
        as numbers ({} when disabled), as PyTorch's."""
        out = {}
        for k, v in self._state_dict():
            x = v.item()
            out[k] = int(x) if k in ("growth_interval", "_growth_tracker") else x
        return out

    def load_state_dict(self, state_dict):
        from . import tensor, float64
        self._load_state_dict([(k, tensor(float(v), dtype=float64)) for k, v in state_dict.items()])


def _device_autocast(device_type, default_dtype):
    class _autocast(autocast):
        __doc__ = f"torch.{device_type}.amp.autocast: ember.autocast('{device_type}', ...)."

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            super().__init__(device_type, dtype, enabled, cache_enabled)

    _autocast.__name__ = _autocast.__qualname__ = "autocast"
    return _autocast
