"""ember.nn.Parameter: a tensor that a Module registers as a parameter when assigned to it."""
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
