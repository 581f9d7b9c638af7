"""The allocator's memory history and snapshots for one device type, in PyTorch's formats:
ember.cuda.memory and ember.cpu.memory are this over their devices.

    ember.cuda.memory._record_memory_history()          # or (True) as in PyTorch 1.13
    ... run ...
    ember.cuda.memory._dump_snapshot("snapshot.pickle")  # pytorch.org/memory_viz reads it
    python3 -m torch.cuda._memory_viz stats <(python3 -c 'import pickle,sys; ...')

Each allocation, release (requested and completed), segment taken from or given back to the
device, and out-of-memory is an entry of the device's trace, with the Python frames that asked for
it unless context is None (1.13: record_context=False)."""
import pickle
import sys

from .. import _C

_P = _C._profiler


class MemoryHistory:
    def __init__(self, device_type, devices):
        self._type = device_type
        self._devices = devices  # () -> the device indices

    def _names(self, device):
        if device is None:
            return [f"{self._type}:{i}" for i in self._devices()]
        name = str(device)
        if isinstance(device, int):
            name = f"{self._type}:{device}"
        if ":" not in name:
            name += ":0"
        if not name.startswith(self._type + ":"):
            raise ValueError(f"expected a {self._type} device, got {device!r}")
        return [name]

    def record_memory_history(self, enabled="all", context="all", stacks="all",
                              max_entries=sys.maxsize, device=None, record_context=True,
                              trace_alloc_max_entries=None, trace_alloc_record_context=None):
        """Starts (enabled True, "all" or "state") or stops (None, False) keeping each device's
        last max_entries allocator events, each with the Python frames that caused it unless
        context is None. PyTorch 1.13's (enabled: bool, record_context, trace_alloc_max_entries,
        trace_alloc_record_context, device) and 2.x's keywords are both taken; C++ frames
        (stacks="all") are not recorded, only Python's."""
        on = enabled not in (None, False)
        if trace_alloc_max_entries is not None:
            max_entries = trace_alloc_max_entries
        # 1.13's second parameter is record_context (a bool), 2.x's context.
        if context not in (None, False, True, "state", "alloc", "all"):
            raise ValueError(f"_record_memory_history: context must be None, 'state', 'alloc' or "
                             f"'all' (or 1.13's record_context bool), got {context!r}")
        if stacks not in ("python", "all"):
            raise ValueError(f"_record_memory_history: stacks must be 'python' or 'all', got "
                             f"{stacks!r}")
        frames = context not in (None, False) and bool(record_context) and \
            trace_alloc_record_context is not False
        if on and enabled not in (True, "all", "state"):
            raise ValueError(f"_record_memory_history: enabled must be True, 'all', 'state' or "
                             f"None, got {enabled!r}")
        if on and (not isinstance(max_entries, int) or max_entries < 1):
            raise ValueError(f"_record_memory_history: max_entries must be a positive int, got "
                             f"{max_entries!r}")
        for name in self._names(device):
            _P.record_memory_history(name, min(max_entries, 2**62) if on else 0, on and frames)

    def snapshot(self, device=None):
        """{'segments': [...], 'device_traces': [[...] per device]}: PyTorch's snapshot."""
        segments, traces = [], []
        for name in self._names(device):
            one = _P.memory_snapshot(name)
            segments.extend(one["segments"])
            traces.extend(one["device_traces"])
        return {"segments": segments, "device_traces": traces}

    def dump_snapshot(self, filename="dump_snapshot.pickle"):
        with open(filename, "wb") as f:
            pickle.dump(self.snapshot(), f)
