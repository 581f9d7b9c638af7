"""ember.compile: torch.compile's signature, checks and results (PyTorch 2.x), over ember's
capture and fusion (ember/compile/, Note [Graphs from traces]).

The first call with each signature (the non-tensor arguments' values; the tensors' shapes,
strides, dtypes, devices and requires-grad; grad mode; autocast; for a module, its modules'
training flags) runs the function eagerly while the op entry records it; later calls with that
signature replay the recorded ops without running the Python code, with chains of elementwise
ops fused into one loop. What the trace cannot show is a graph break (reported under
EMBER_LOG_GRAPH_BREAKS=1 or TORCH_LOGS=graph_breaks), and the function then runs eagerly for that
signature: a backward pass, a value read on the host (item(), printing, branching on a tensor),
a custom autograd.Function, an op whose result's shape depends on values. As with CUDA graphs, a
replay does not run the function's Python side effects. The rest is PyTorch's: the argument
checks and their messages, `disable=`, the decorator form, and for a module an OptimizedModule
holding it as `_orig_mod` (so its state_dict keys start with "_orig_mod.")."""
import functools
import sys
import threading
import weakref

from . import _C, nn
from ._C import Tensor

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


_state = threading.local()


def is_compiling():
    """Whether the caller runs inside a trace (torch.compiler.is_compiling)."""
    return getattr(_state, "tracing", 0) > 0


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


# --- arguments and results as tensors plus a hashable structure ---------------------------------

class _Opaque(Exception):
    """An argument the signature cannot hold (unhashable, or an object of its own)."""


_CONSTANTS = (type(None), bool, int, float, complex, str, bytes, _C.dtype, _C.device)


def _flatten(obj, tensors):
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return "T"
    if isinstance(obj, (tuple, list)):  # named tuples (torch.return_types) keep their type
        return ("seq", type(obj), tuple(_flatten(x, tensors) for x in obj))
    if isinstance(obj, dict):
        return ("dict", tuple(obj.keys()), tuple(_flatten(v, tensors) for v in obj.values()))
    if isinstance(obj, _CONSTANTS) or type(obj).__name__ == "Size":
        return ("C", obj)
    raise _Opaque(type(obj).__name__)


def _unflatten(spec, tensors):
    if spec == "T":
        return next(tensors)
    kind = spec[0]
    if kind == "C":
        return spec[1]
    if kind == "dict":
        return {k: _unflatten(v, tensors) for k, v in zip(spec[1], spec[2])}
    cls, items = spec[1], [_unflatten(x, tensors) for x in spec[2]]
    if cls is list or cls is tuple:
        return cls(items)
    return cls(*items) if hasattr(cls, "_fields") else cls(items)


# --- what the op entry cannot see, marked while tracing -----------------------------------------

# Tensor methods that hand values to Python: a graph cannot replay the Python that reads them.
_HOST_READS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__",
               "__complex__", "__array__", "__repr__", "__str__", "__format__")


def _marking(name, original, reason):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        _C._mark_capture_break(reason)
        return original(*args, **kwargs)
    return wrapper


class _Marks:
    """Wraps the host reads (and custom autograd Functions) for the length of a trace, so that
    calling one marks a graph break in this thread's capture."""

    def __enter__(self):
        from . import autograd
        self._saved = []
        for name in _HOST_READS:
            original = getattr(Tensor, name, None)
            if original is None:
                continue
            self._saved.append((Tensor, name, Tensor.__dict__.get(name)))
            setattr(Tensor, name, _marking(name, original,
                                           f"Tensor.{name}() reads values on the host"))
        fn = autograd.Function.__dict__["apply"]
        self._saved.append((autograd.Function, "apply", fn))
        setattr(autograd.Function, "apply", classmethod(_marking(
            "apply", fn.__func__, "a custom autograd.Function's backward cannot be traced")))
        return self

    def __exit__(self, *exc):
        for klass, name, original in reversed(self._saved):
            if original is None:  # inherited (object's __format__): drop the wrapper
                delattr(klass, name)
            else:
                setattr(klass, name, original)


_marks_lock = threading.Lock()
_marks_depth = 0
_marks = None


def _enter_marks():
    global _marks_depth, _marks
    with _marks_lock:
        if _marks_depth == 0:
            _marks = _Marks().__enter__()
        _marks_depth += 1


def _exit_marks():
    global _marks_depth, _marks
    with _marks_lock:
        _marks_depth -= 1
        if _marks_depth == 0:
            _marks.__exit__(None, None, None)
            _marks = None


class _Entry:
    """The compiled function of one non-tensor signature, and its results' structure."""

    def __init__(self, fn, spec, fullgraph, fuse):
        self.fn = fn
        self.spec = spec
        self.out_spec = None
        self.returned = False
        self._last = None
        self.eager = False  # the results' structure changed between traces: run eagerly
        self.compiled = _C._CompiledFunction(self._traced, fullgraph, fuse)

    def _traced(self, tensors):
        args, kwargs = _unflatten(self.spec, iter(tensors))
        self.returned = True  # __call__ hands back this call's own result
        if not _C._capture_active():  # a signature that broke: plain eager
            self._last = self.fn(*args, **kwargs)
            return []
        _state.tracing = getattr(_state, "tracing", 0) + 1
        _enter_marks()
        try:
            result = self.fn(*args, **kwargs)
        finally:
            _exit_marks()
            _state.tracing -= 1
        out = []
        try:
            out_spec = _flatten(result, out)
        except _Opaque as e:
            _C._mark_capture_break(f"the function returned a {e}")
            out_spec = None
        if self.out_spec is not None and out_spec != self.out_spec:
            self.eager = True
        self.out_spec = out_spec
        self._last = result
        return out


_all_compiled = weakref.WeakSet()  # for compiler.reset()


def _reset():
    """Drops every compiled function's graphs: the next call of each signature traces again."""
    for c in list(_all_compiled):
        c._entries.clear()


class _Compiled:
    """A compiled function: its calls traced once per signature and replayed after (see the
    module's docstring)."""

    def __init__(self, fn, settings, extra_key=None):
        self._torchdynamo_orig_callable = fn
        self._settings = settings
        self._extra_key = extra_key
        self._fuse = settings.get("backend") not in _DEBUG_BACKENDS
        self._entries = {}
        _all_compiled.add(self)
        if not isinstance(fn, nn.Module):
            functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        fn = self._torchdynamo_orig_callable
        if is_compiling():  # inside another trace: that trace records these ops
            return fn(*args, **kwargs)
        tensors = []
        try:
            spec = _flatten((args, kwargs), tensors)
            key = (spec, self._extra_key()) if self._extra_key else spec
            hash(key)
        except (_Opaque, TypeError):
            return fn(*args, **kwargs)
        entry = self._entries.get(key)
        if entry is None:
            if self._entries and _C._compile_log_enabled("recompiles"):
                print(f"[ember.compile] recompiling {getattr(fn, '__qualname__', fn)!s:.60}: "
                      "new non-tensor arguments or train/eval flags", file=sys.stderr)
            entry = self._entries[key] = _Entry(fn, spec, self._settings.get("fullgraph", False),
                                                self._fuse)
        if entry.eager:
            return fn(*args, **kwargs)
        out = entry.compiled(tensors)
        if entry.returned:  # this call ran fn (a trace, or eagerly after a break)
            result, entry._last, entry.returned = entry._last, None, False
            return result
        if entry.out_spec is None:
            return fn(*args, **kwargs)
        return _unflatten(entry.out_spec, iter(out))

    def _stats(self):
        """Traces, graph runs, eager runs and breaks over every signature, for tests and logs."""
        total = {"traces": 0, "graph_runs": 0, "eager_runs": 0, "fused_ops": 0, "breaks": []}
        for e in self._entries.values():
            s = e.compiled.stats()
            for k in ("traces", "graph_runs", "eager_runs", "fused_ops"):
                total[k] += s[k]
            total["breaks"] += s["breaks"]
        return total

    def __get__(self, obj, objtype=None):  # a compiled method binds as the method does
        return self if obj is None else functools.partial(self, obj)


class OptimizedModule(nn.Module):
    """A compiled module (torch._dynamo.eval_frame.OptimizedModule): the original is its child
    `_orig_mod`, attributes it lacks are the original's, and calling it calls the original."""

    def __init__(self, mod, settings):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_settings"] = settings
        # A module's calls differ with its modules' train/eval flags: part of the signature.
        self.__dict__["_compiled"] = _Compiled(
            mod, settings, extra_key=lambda: tuple(m.training for m in mod.modules()))

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

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
    """torch.compile: model wrapped for capture and fusion (see the module's docstring). With no
    model, a decorator; with disable=True, model itself."""
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
