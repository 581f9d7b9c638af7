"""torch.nn.Module's Python side: the C++ Module (ember._C._nn.Module) keeps parameters, buffers
and children; this adds what PyTorch programs call on it that needs no C++ (hooks, type
conversions, parameter lookups)."""
from collections import OrderedDict, namedtuple

from ... import _C

Module = _C._nn.Module


def _get_parameter(self, target):
    """The parameter at a dotted path ("layer1.0.weight")."""
    owner, _, name = target.rpartition(".")
    mod = self.get_submodule(owner)
    p = getattr(mod, name, None)
    if p is None or name not in dict(mod.named_parameters(recurse=False)):
        raise AttributeError(f"`{name}` is not an nn.Parameter")
    return p


def _get_buffer(self, target):
    owner, _, name = target.rpartition(".")
    mod = self.get_submodule(owner)
    if name not in dict(mod.named_buffers(recurse=False)):
        raise AttributeError(f"`{name}` is not a buffer")
    return getattr(mod, name)


def _type(self, dst_type):
    return self.to(dst_type)


def _register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
    """hook(module, input, output) after each forward; returns a handle whose remove() undoes it."""
    return _Hooks.of(self).add("forward", hook, prepend)


def _register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
    """hook(module, input) before each forward (a non-None result replaces the input)."""
    return _Hooks.of(self).add("forward_pre", hook, prepend)


class _RemovableHandle:
    def __init__(self, hooks, kind, key):
        self.hooks, self.kind, self.key = hooks, kind, key

    def remove(self):
        self.hooks.get(self.kind, {}).pop(self.key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Hooks:
    """A module's forward hooks, kept in its __dict__ and run by Module.__call__."""
    _next = 0

    @staticmethod
    def of(module):
        hooks = module.__dict__.get("_ember_hooks")
        if hooks is None:
            hooks = {}
            object.__setattr__(module, "_ember_hooks", hooks)
        return _HookView(hooks)


class _HookView:
    def __init__(self, hooks):
        self.hooks = hooks

    def add(self, kind, hook, prepend):
        _Hooks._next += 1
        table = self.hooks.setdefault(kind, OrderedDict())
        table[_Hooks._next] = hook
        if prepend:
            table.move_to_end(_Hooks._next, last=False)
        return _RemovableHandle(self.hooks, kind, _Hooks._next)


_native_call = Module.__call__


def _call(self, *args, **kwargs):
    hooks = self.__dict__.get("_ember_hooks") if hasattr(self, "__dict__") else None
    if not hooks:
        return _native_call(self, *args, **kwargs)
    for hook in list(hooks.get("forward_pre", {}).values()):
        result = hook(self, args)
        if result is not None:
            args = result if isinstance(result, tuple) else (result,)
    out = _native_call(self, *args, **kwargs)
    for hook in list(hooks.get("forward", {}).values()):
        result = hook(self, args, out)
        if result is not None:
            out = result
    return out


_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _load_state_dict(self, state_dict, strict=True, assign=False):
    """Copies state_dict's tensors into this module's; returns (missing_keys, unexpected_keys)
    as PyTorch does (with strict=True either is an error)."""
    own = set(self._ember_state_dict().keys())
    given = set(state_dict.keys())
    missing = [k for k in self._ember_state_dict().keys() if k not in given]
    unexpected = [k for k in state_dict.keys() if k not in own]
    if strict and (missing or unexpected):
        parts = []
        if missing:
            parts.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing))
        if unexpected:
            parts.append("Unexpected key(s) in state_dict: " +
                         ", ".join(f'"{k}"' for k in unexpected))
        raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" +
                           ".\n\t".join(parts) + ".")
    self._ember_load_state_dict({k: v for k, v in state_dict.items() if k in own}, strict=False)
    return _IncompatibleKeys(missing, unexpected)


def _extra_state_dict(self, *args, destination=None, prefix="", keep_vars=False):
    sd = self._ember_state_dict()
    if not prefix and destination is None:
        return sd
    out = destination if destination is not None else OrderedDict()
    for k, v in sd.items():
        out[prefix + k] = v
    return out


def _to_empty(self, *, device, recurse=True):
    """Moves parameters and buffers to `device` without their values (uninitialised memory of
    the same shapes and dtypes), as torch.nn.Module.to_empty; reset_parameters() or a state dict
    fills them. Parameters sharded by fully_shard (DTensors) keep their shards."""
    from ..parameter import Parameter
    for module in (self.modules() if recurse else [self]):
        for name, p in list(module.named_parameters(recurse=False)):
            if type(p).__name__ != "DTensor":
                setattr(module, name, Parameter(_C._ops.empty_like(p.detach(), device=device),
                                                requires_grad=p.requires_grad))
        for name, b in list(module.named_buffers(recurse=False)):
            setattr(module, name, _C._ops.empty_like(b, device=device))
    return self


def install():
    """Adds the Python-side methods to ember.nn.Module (once, at import)."""
    Module.get_parameter = _get_parameter
    Module.get_buffer = _get_buffer
    Module.type = _type
    Module.to_empty = _to_empty
    Module.register_forward_hook = _register_forward_hook
    Module.register_forward_pre_hook = _register_forward_pre_hook
    Module.__call__ = _call
    Module._ember_state_dict = Module.state_dict
    Module.state_dict = _extra_state_dict
    Module._ember_load_state_dict = Module.load_state_dict
    Module.load_state_dict = _load_state_dict
    Module.dump_patches = False
    Module._version = 1
