"""torch.ops: operators by namespace, name and overload (torch.ops.aten.add.Tensor), each
resolved to ember's function of that name (ember's functions choose their overload by argument
types, so every overload name of an op is the same callable), and torch.ops.load_library."""
import ctypes

import ember


def _aten_slice(input, dim=0, start=None, end=None, step=1):
    """aten::slice: input[start:end:step] along dim, a view."""
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return input[tuple(index)]


# ATen names that are not torch.* functions of the same meaning.
_ATEN_ONLY = {"slice": _aten_slice}


def _resolve(namespace, name):
    if namespace == "aten":
        if name in _ATEN_ONLY:
            return _ATEN_ONLY[name]
        for owner in (ember, ember.nn.functional, ember.linalg, ember.special):
            fn = getattr(owner, name, None) if name in dir(owner) else None
            if callable(fn):
                return fn
        method = getattr(ember.Tensor, name, None)
        if callable(method):
            return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)
    raise AttributeError(f"'_OpNamespace' '{namespace}' object has no attribute '{name}'")


class OpOverload:
    """One overload of an operator (torch.ops.aten.add.Tensor): callable."""

    def __init__(self, packet, overload):
        self._packet, self._overloadname = packet, overload
        self.__name__ = f"{packet.__name__}.{overload}"

    def __call__(self, *args, **kwargs):
        return self._packet._fn(*args, **kwargs)

    @property
    def overloadpacket(self):
        return self._packet

    def __repr__(self):
        return f"<OpOverload(op='{self._packet._qualified}', overload='{self._overloadname}')>"


class OpOverloadPacket:
    """An operator with all its overloads (torch.ops.aten.add): callable, and .default, .Tensor,
    .Scalar (any overload name) its overloads."""

    def __init__(self, namespace, name, fn):
        self.__name__, self._qualified, self._fn = name, f"{namespace}.{name}", fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        return OpOverload(self, overload)

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._qualified}')>"


class _OpNamespace:
    def __init__(self, name):
        self.name = name

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        packet = OpOverloadPacket(self.name, op, _resolve(self.name, op))
        setattr(self, op, packet)
        return packet


class _Ops:
    """torch.ops: attribute access makes each namespace (aten, prims, an extension's)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        return namespace

    def load_library(self, path):
        """Loads a shared library (an extension's operators register themselves when loaded);
        its path is kept in loaded_libraries."""
        ctypes.CDLL(path)
        self.loaded_libraries.add(path)

    def __init__(self):
        self.loaded_libraries = set()


ops = _Ops()
