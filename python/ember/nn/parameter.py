"""ember.nn.Parameter: a tensor that a Module registers as a parameter when assigned to it."""
from .. import _C


class Parameter(_C.Tensor):
    """A leaf tensor that requires grad (unless told not to); data is shared, not copied."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
