"""ember.autograd: gradients of tensors (backward, grad, gradcheck) and the grad-mode switches.

no_grad, enable_grad and set_grad_enabled work as context managers and as decorators, per thread,
as in PyTorch.
"""
import functools
import sys
import threading

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


_inference = threading.local()  # this thread's inference-mode flag


def is_inference_mode_enabled():
    """Whether this thread is inside inference_mode() (torch.is_inference_mode_enabled)."""
    return getattr(_inference, "enabled", False)


class inference_mode(_GradMode):
    """ember's inference mode is no-grad mode, flagged so that is_inference_mode_enabled() says
    so (torch.inference_mode); inference_mode(False) turns both off."""

    def __new__(cls, mode=True):
        if callable(mode):  # the bare decorator, @inference_mode (PyTorch 2.x takes it)
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.inference = bool(mode)
        self.mode = not mode

    def __enter__(self):
        self._prev_inference = is_inference_mode_enabled()
        _inference.enabled = self.inference
        return super().__enter__()

    def __exit__(self, *exc):
        _inference.enabled = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        inference = self.inference

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(inference):
                return fn(*args, **kwargs)
        return wrapper


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


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """The pre-0.4 wrapper: Variable(t, requires_grad=...) is the tensor itself (every tensor is
    one now), as in PyTorch."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if requires_grad:
            data.requires_grad_(True)
        return data


class FunctionCtx:
    """What forward and backward of a Function share: saved tensors and flags."""

    def save_for_backward(self, *tensors):
        """Keeps tensors for backward (saved_tensors)."""
        self._saved = tensors

    @property
    def saved_tensors(self):
        return getattr(self, "_saved", ())

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        self._materialize = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """A differentiable operation written in Python: subclass with forward(ctx, *args) and
    backward(ctx, *grad_outputs) static methods and call MyFunction.apply(*args), as
    torch.autograd.Function (setup_context(ctx, inputs, output) with a ctx-less forward also
    works)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        with no_grad():
            if "setup_context" in cls.__dict__ or any("setup_context" in b.__dict__
                                                       for b in cls.__mro__[1:-1]
                                                       if b is not Function):
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        inputs = [a for a in args if isinstance(a, _C.Tensor)]
        if not (_C.is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        outputs = out if isinstance(out, tuple) else (out,)
        positions = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        skip = getattr(ctx, "_non_differentiable", set())
        materialize = getattr(ctx, "_materialize", True)
        differentiable = [o for o in outputs if isinstance(o, _C.Tensor) and id(o) not in skip]

        def backward(*grads):
            if materialize:
                grads = tuple(_C._ops.zeros_like(o) if g is None else g
                              for g, o in zip(grads, differentiable))
            result = cls.backward(ctx, *grads)
            result = result if isinstance(result, tuple) else (result,)
            # backward returns one gradient per forward argument; keep the tensors' ones.
            return tuple(result[i] if i < len(result) else None for i in positions)

        # An output that is an input unchanged gets a fresh identity, as PyTorch's view of it.
        fixed = []
        for o in outputs:
            if isinstance(o, _C.Tensor) and any(o is a for a in inputs):
                o = o.detach()
            fixed.append(o)
        outputs = tuple(fixed)
        differentiable = [o for o in outputs if isinstance(o, _C.Tensor) and id(o) not in skip]
        _C._autograd._record_function(cls._backward_name, differentiable, inputs, backward)
        return outputs if isinstance(out, tuple) else outputs[0]


def once_differentiable(fn):
    """Marks a backward that is not differentiable itself (ember's backward never records)."""
    return fn


# torch.autograd.functional, importable by its module path too (from torch.autograd.functional
# import jacobian) though ember.autograd is one file.
from . import _autograd_functional as functional  # noqa: E402
sys.modules[__name__ + ".functional"] = functional
