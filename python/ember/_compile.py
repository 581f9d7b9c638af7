"""ember.compile: torch.compile's signature, checks and results (PyTorch 2.x), so that programs
written for it run (nanoGPT's compile=True, `model = torch.compile(model)`).

What it does not do yet: capture and fusion. The function or module it returns runs eagerly, op
by op, so a compiled program gives eager ember's values at eager ember's speed; docs/compile.md
says so, and the capture issue replaces the body of `_Compiled.__call__`. The rest is
PyTorch's: the argument checks and their messages, `disable=`, the decorator form, and for a
module an OptimizedModule holding it as `_orig_mod` (so its state_dict keys start with
"_orig_mod.", which programs strip when they load a checkpoint)."""
import functools

from . import nn

__all__ = ["compile", "OptimizedModule", "list_backends", "is_compiling"]

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("cudagraphs", "inductor", "onnxrt", "openxla", "tvm")
# Backends PyTorch keeps for debugging, accepted by name but not listed by list_backends().
_DEBUG_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition")


class InvalidBackend(RuntimeError):
    """torch._dynamo.exc.InvalidBackend."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


def list_backends(exclude_tags=("debug", "experimental")):
    """The names of compile's backends (torch._dynamo.list_backends)."""
    return list(_BACKENDS)


def is_compiling():
    """Whether the caller runs under capture (torch.compiler.is_compiling): never, as ember
    does not capture yet."""
    return False


def _check(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS + _DEBUG_BACKENDS:
        raise InvalidBackend(backend)
    if not isinstance(backend, str) and not callable(backend):
        raise InvalidBackend(backend)


class _Compiled:
    """A compiled function: calls it (eagerly, for now)."""

    def __init__(self, fn, settings):
        self._torchdynamo_orig_callable = fn
        self._settings = settings
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._torchdynamo_orig_callable(*args, **kwargs)

    def __get__(self, obj, objtype=None):  # a compiled method binds as the method does
        return self if obj is None else functools.partial(self, obj)


class OptimizedModule(nn.Module):
    """A compiled module (torch._dynamo.eval_frame.OptimizedModule): the original is its child
    `_orig_mod`, attributes it lacks are the original's, and calling it calls the original."""

    def __init__(self, mod, settings):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_settings"] = settings

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return super().__getattr__(name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        # The wrapper's own names stay its own; any other goes to the original, as in PyTorch.
        if name == "_orig_mod" or hasattr(type(self), name):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile: model wrapped for capture and fusion (run eagerly for now: see the module's
    docstring). With no model, a decorator; with disable=True, model itself."""
    _check(backend, mode, options)
    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options)
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorate
    if disable:
        return model
    if isinstance(model, nn.Module):
        return OptimizedModule(model, settings)
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable or a Module, got "
                           f"{type(model).__name__}")
    return _Compiled(model, settings)


def _module_compile(self, *args, **kwargs):
    """Module.compile (PyTorch 2.2): compiles this module's calls in place (checks as compile)."""
    kwargs.pop("disable", None)
    _check(kwargs.get("backend", "inductor"), kwargs.get("mode"), kwargs.get("options"))


nn.Module.compile = _module_compile
