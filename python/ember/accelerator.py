"""ember.accelerator: the current accelerator, device-agnostic (torch.accelerator, PyTorch 2.6's
names). ember's accelerator is CUDA; with no GPU there is none and is_available() is False."""
from . import _C
from . import cuda as _cuda
from ._missing import missing

__all__ = ["current_accelerator", "current_device_index", "current_device_idx", "device_count",
           "is_available", "set_device_index", "set_device_idx", "synchronize", "device_index"]


def is_available():
    """Whether a GPU is there."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """ember.device('cuda') when a GPU is there, else None."""
    return _C.device("cuda") if _cuda.is_available() else None


def device_count():
    """The number of GPUs (0 without)."""
    return _cuda.device_count()


def current_device_index():
    """The current GPU's index."""
    return _cuda.current_device()


def set_device_index(device):
    """Makes a GPU the current one."""
    if isinstance(device, _C.device):
        device = device.index or 0
    _cuda.set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None):
    """Waits for the GPU's work."""
    _cuda.synchronize()


device_index = _cuda.device


def _device_of(device):
    """The device a torch.Stream/torch.Event is for: the current accelerator's when none is
    given, else the CPU (PyTorch 2.6's choice on a machine without one)."""
    if device is None:
        return current_accelerator() or _C.device("cpu")
    device = _C.device(device) if not isinstance(device, _C.device) else device
    if device.type == "cuda" and not _cuda.is_available():
        raise RuntimeError(f"{device.type} is not available: {_cuda.unavailable_reason()}")
    return device


class _OnDevice:
    """What torch.Stream and torch.Event share: a device, and on CUDA the ember.cuda object."""

    def _backend(self):
        if self._cuda is None:
            raise RuntimeError(f"{self.device.type} backend doesn't support events.")
        return self._cuda

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()


class Stream(_OnDevice):
    """torch.Stream(device=None, *, priority=0): a device-agnostic stream (PyTorch 2.2). On CUDA
    it is an ember.cuda.Stream; on the CPU, where work runs as it is issued, it is the one
    in-order stream, always done, and has no events (as PyTorch's: 'cpu backend doesn't support
    events')."""

    def __init__(self, device=None, *, priority=0):
        self.device = _device_of(device)
        self._cuda = None
        if self.device.type == "cuda":
            self._cuda = _cuda.Stream(self.device, priority=priority)

    @property
    def device_type(self):
        return self.device.type

    @property
    def device_index(self):
        return -1 if self.device.index is None else self.device.index

    @property
    def stream_id(self):
        return self._cuda.cuda_stream if self._cuda is not None else 0

    def record_event(self, event=None):
        event = event if event is not None else Event(self.device)
        event.record(self)
        return event

    def wait_event(self, event):
        self._backend().wait_event(event._backend())

    def wait_stream(self, stream):
        self._backend().wait_stream(stream._backend())

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device and \
            self.stream_id == other.stream_id

    def __hash__(self):
        return hash((str(self.device), self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event(_OnDevice):
    """torch.Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a
    device-agnostic event (PyTorch 2.2), an ember.cuda.Event on CUDA. On the CPU an event is
    never pending (query() is True, synchronize() returns) and recording one is an error, as in
    PyTorch."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device_of(device)
        self._cuda = None
        if self.device.type == "cuda":
            if interprocess:
                raise NotImplementedError("torch.Event: ember's CUDA events are not "
                                          "interprocess; share tensors instead")
            self._cuda = _cuda.Event(enable_timing=enable_timing, blocking=blocking)

    @property
    def event_id(self):
        return id(self._cuda) if self._cuda is not None else 0

    def record(self, stream=None):
        """Records on stream, or on the device's current stream."""
        self._backend().record(None if stream is None else stream._backend())

    def wait(self, stream=None):
        """Makes stream (or the current stream) wait for this event."""
        self._backend().wait(None if stream is None else stream._backend())

    def elapsed_time(self, end_event):
        return self._backend().elapsed_time(end_event._backend())

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index="
                f"{-1 if self.device.index is None else self.device.index}, "
                f"event_id={self.event_id}")


__getattr__ = missing(__name__)
