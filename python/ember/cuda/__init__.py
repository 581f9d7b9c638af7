"""ember.cuda: GPUs (torch.cuda's names). Without a GPU, is_available() is False and
unavailable_reason() says why; the memory functions and streams then raise."""
from .. import _C

_c = _C._cuda
is_available = _c.is_available
device_count = _c.device_count
unavailable_reason = _c.unavailable_reason
current_device = _c.current_device
set_device = _c.set_device
get_device_name = _c.get_device_name
get_device_capability = _c.get_device_capability
get_device_properties = _c.get_device_properties
mem_get_info = _c.mem_get_info
can_device_access_peer = _c.can_device_access_peer
synchronize = _c.synchronize
memory_allocated = _c.memory_allocated
max_memory_allocated = _c.max_memory_allocated
memory_reserved = _c.memory_reserved
memory_cached = _c.memory_cached
max_memory_reserved = _c.max_memory_reserved
reset_peak_memory_stats = _c.reset_peak_memory_stats
memory_stats = _c.memory_stats
memory_summary = _c.memory_summary
empty_cache = _c.empty_cache
set_per_process_memory_fraction = _c.set_per_process_memory_fraction
Stream = _c.Stream
Event = _c.Event
current_stream = _c.current_stream
default_stream = _c.default_stream
set_stream = _c.set_stream
OutOfMemoryError = _C.OutOfMemoryError


def is_built():
    """Whether this ember was built with its CUDA backend."""
    return _C._cuda_built


class device:
    """Makes a GPU the current one in its scope: `with ember.cuda.device(1): ...`."""

    def __init__(self, device):
        if isinstance(device, _C.device):
            device = device.index if device.index is not None else -1
        elif isinstance(device, str):
            device = _C.device(device).index
        self.idx = -1 if device is None else device

    def __enter__(self):
        if self.idx < 0:
            return self
        self.prev = current_device()
        if self.prev != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev != self.idx:
            set_device(self.prev)
        return False


class stream:
    """Makes a stream (and its device) current in its scope: `with ember.cuda.stream(s): ...`."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is None:
            return self
        self.prev_device = current_device()
        if self.stream.device.index != self.prev_device:
            set_device(self.stream.device.index)
        self.prev = current_stream()
        set_stream(self.stream)
        return self

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        set_stream(self.prev)
        if self.prev_device != current_device():
            set_device(self.prev_device)
        return False


def try_gpu(i=0):
    """cuda:i if it exists, else the CPU (the d2l.ai helper)."""
    return _C.device(f"cuda:{i}") if device_count() > i else _C.device("cpu")


def try_all_gpus():
    """Every GPU, or [cpu] when there is none (the d2l.ai helper)."""
    return [_C.device(f"cuda:{i}") for i in range(device_count())] or [_C.device("cpu")]


from . import memory  # noqa: E402,F401  (torch.cuda.memory: history and snapshots)
