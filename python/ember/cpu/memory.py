"""The memory history and snapshots of ember's CPU devices (cpu:0, and the virtual ones of
EMBER_CPU_DEVICES), as ember.cuda.memory's for GPUs: the CPU's allocator is the same caching
allocator."""
from .. import _C
from ..profiler._memory import MemoryHistory


def _devices():
    return range(_C._profiler.cpu_device_count())


_history = MemoryHistory("cpu", _devices)
_record_memory_history = _history.record_memory_history
_snapshot = _history.snapshot
_dump_snapshot = _history.dump_snapshot


def memory_snapshot():
    """The segments of every CPU device."""
    return _snapshot()["segments"]
