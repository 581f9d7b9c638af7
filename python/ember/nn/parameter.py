"""ember.nn.Parameter: a tensor that a Module registers as a parameter when assigned to it; Buffer
likewise for a buffer; and the uninitialized ones lazy modules fill in."""
from .. import _C


class Parameter(_C.Tensor):
    """A leaf tensor that requires grad (unless told not to); data is shared, not copied."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C._ops.empty(0)
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class UninitializedParameter(Parameter):
    """A parameter whose shape a lazy module fills in on its first call (ember has no lazy
    modules yet: materialize() makes it a plain one)."""

    def materialize(self, shape, device=None, dtype=None):
        self.set_(_C._ops.empty(shape, device=device, dtype=dtype or _C.float32))
        self.__class__ = Parameter


class Buffer(_C.Tensor):
    """A tensor a Module registers as a buffer when assigned to it (torch.nn.Buffer)."""

    def __init__(self, data=None, *, persistent=True):
        super().__init__(data if data is not None else _C._ops.empty(0))
        self.persistent = persistent


class UninitializedBuffer(_C.Tensor):
    """A buffer whose shape is not known yet (a lazy module's running statistics): it holds no
    data and has no shape until materialize(shape) gives it both. PyTorch's becomes a plain Tensor
    then; ember's Tensor is a C++ type that a Python subclass cannot turn back into, so it becomes
    a Buffer, a Tensor with nothing else added."""

    def __init__(self, requires_grad=False, device=None, dtype=None):
        super().__init__(_C._ops.empty(0, device=device, dtype=dtype))
        self.requires_grad_(requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        """Gives the buffer `shape` (empty data) on its device and dtype, or the ones given."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = _C._ops.empty(shape, device=device, dtype=dtype)
        self.__class__ = Buffer
        self.persistent = True

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))
