"""torch.cuda.memory's history and snapshot functions over ember's CUDA allocators (the others
are in ember.cuda itself). Without a GPU they raise, as every ember.cuda memory function does."""
from .. import _C
from ..profiler._memory import MemoryHistory


def _devices():
    if not _C._cuda.is_available():
        raise RuntimeError("ember.cuda.memory: no CUDA device: " + _C._cuda.unavailable_reason())
    return range(_C._cuda.device_count())


_history = MemoryHistory("cuda", _devices)
_record_memory_history = _history.record_memory_history
_snapshot = _history.snapshot
_dump_snapshot = _history.dump_snapshot


def memory_snapshot():
    """The segments of every device (torch.cuda.memory_snapshot)."""
    return _snapshot()["segments"]
