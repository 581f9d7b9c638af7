"""ember.compiler: torch.compiler's user-facing names. ember.compile does not capture yet (see
ember/_compile.py), so nothing is ever compiling and there is no cache to reset."""
from ._compile import compile, is_compiling, list_backends  # noqa: F401
from ._missing import missing

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "list_backends", "reset", "disable"]


def is_dynamo_compiling():
    """Whether the caller runs under capture: never yet."""
    return False


def reset():
    """Clears compiled code: ember keeps none yet."""


def disable(fn=None, recursive=True):
    """Keeps fn out of capture (a decorator): fn itself, as nothing is captured yet."""
    if fn is None:
        return lambda f: f
    return fn


__getattr__ = missing(__name__)
