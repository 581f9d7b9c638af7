"""ember.compiler: torch.compiler's user-facing names over ember.compile (ember/_compile.py)."""
import functools

from . import _C
from ._compile import compile, is_compiling, list_backends, _reset  # noqa: F401
from ._missing import missing

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "list_backends", "reset", "disable"]


def is_dynamo_compiling():
    """Whether the caller runs inside a trace (as is_compiling)."""
    return is_compiling()


def reset():
    """Drops every compiled function's graphs (torch.compiler.reset): the next call traces."""
    _reset()


def disable(fn=None, recursive=True):
    """Keeps fn out of capture (a decorator): called inside a trace, it is a graph break, and the
    traced function runs eagerly for that signature, as PyTorch runs a disabled function."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if is_compiling():
            _C._mark_capture_break(f"{getattr(fn, '__qualname__', fn)} is compiler.disable'd")
        return fn(*args, **kwargs)
    return wrapper


__getattr__ = missing(__name__)
