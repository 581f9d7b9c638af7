"""ember.autograd: gradients of tensors (backward, grad, gradcheck) and the grad-mode switches.

no_grad, enable_grad and set_grad_enabled work as context managers and as decorators, per thread,
as in PyTorch.
"""
import functools

from . import _C

backward = _C._autograd.backward
grad = _C._autograd.grad
gradcheck = _C._autograd.gradcheck


class _GradMode:
    """A context manager and decorator that sets grad mode to `self.mode` for its scope."""
    mode = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Ops record no graph in this scope (torch.no_grad)."""
    mode = False


class enable_grad(_GradMode):
    """Ops record the graph in this scope, also inside no_grad (torch.enable_grad)."""
    mode = True


class inference_mode(_GradMode):
    """ember's inference mode is no-grad mode (torch.inference_mode)."""
    mode = False

    def __init__(self, mode=True):
        self.mode = not mode


class set_grad_enabled(_GradMode):
    """Sets grad mode now, and restores it at the end of a `with` block (torch.set_grad_enabled)."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper
