"""Containers: Sequential (ember's C++ one), ModuleList, ModuleDict, ParameterList and
ParameterDict (and the deprecated Container). Their children and parameters are registered
under their index or key, so parameters(), state_dict() and .to() see them as PyTorch's do."""
from collections import OrderedDict
import operator
import warnings

from ... import _C
from ..parameter import Parameter
from .module import Module

Sequential = _C._nn.Sequential

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


class Container(Module):
    """Deprecated (Module does all it did): the keyword arguments become named children."""

    def __init__(self, **kwargs):
        super().__init__()
        # A UserWarning as PyTorch's, since DeprecationWarning is hidden by default.
        warnings.warn("nn.Container is deprecated. All of it's functionality "
                      "is now implemented in nn.Module. Subclass that instead.")
        for key, value in kwargs.items():
            self.add_module(key, value)


class ModuleList(Module):
    """Modules in a list, each registered under its index."""

    def __init__(self, modules=None):
        super().__init__()
        self._order = []
        if modules is not None:
            self.extend(modules)

    def _index(self, idx):
        idx = operator.index(idx)
        n = len(self._order)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self)[idx])
        return getattr(self, self._order[self._index(idx)])

    def __setitem__(self, idx, module):
        setattr(self, self._order[self._index(idx)], module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            kept = [m for i, m in enumerate(self) if i not in range(*idx.indices(len(self)))]
        else:
            i = self._index(idx)
            kept = [m for j, m in enumerate(self) if j != i]
        for name in self._order:
            delattr(self, name)
        self._order = []
        self.extend(kept)

    def __len__(self):
        return len(self._order)

    def __iter__(self):
        return iter([getattr(self, n) for n in self._order])

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module):
        """Adds a module at the end."""
        name = str(len(self._order))
        self.add_module(name, module)
        self._order.append(name)
        return self

    def extend(self, modules):
        """Adds each of modules at the end."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Inserts a module before index."""
        mods = list(self)
        mods.insert(index, module)
        del self[:]
        self.extend(mods)

    def pop(self, key):
        m = self[key]
        del self[key]
        return m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward: call its modules")


class ModuleDict(Module):
    """Modules by string key, each registered under its key, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        self._keys = []
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key, module):
        self.add_module(key, module)
        if key not in self._keys:
            self._keys.append(key)

    def __delitem__(self, key):
        delattr(self, key)
        self._keys.remove(key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return list(self._keys)

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def update(self, modules):
        """Adds the (key, module) pairs of a mapping or an iterable of pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward: call its modules")


class ParameterList(Module):
    """Parameters in a list, each registered under its index."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        idx = operator.index(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return getattr(self, str(idx % self._size))

    def __setitem__(self, idx, param):
        idx = operator.index(idx) % self._size
        setattr(self, str(idx), param if isinstance(param, Parameter) else Parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter([self[i] for i in range(self._size)])

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        """Adds a parameter (a tensor becomes one) at the end."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]"
                         for i, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by string key, in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = []
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        setattr(self, key, value if isinstance(value, Parameter) else Parameter(value))
        if key not in self._keys:
            self._keys.append(key)

    def __delitem__(self, key):
        delattr(self, key)
        self._keys.remove(key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v


