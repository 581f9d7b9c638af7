"""torch.nn.utils.stateless.functional_call: calling a module with some of its parameters and
buffers replaced by given tensors (PyTorch 2.x's semantics and arguments, which include 1.13's).

As PyTorch 2.x, the given tensors are swapped into the module for the call and the module's own
put back afterwards; in ember they go into the C++ slots, which is what ember's C++ layers read
(Note [Reparametrizing ember's C++ layers] in _native.py), so this works for every module,
C++ containers included. A tensor the module assigns to one of those names during the call is
written back into the given dict, as in PyTorch."""
import contextlib
from collections.abc import Iterable

from ... import _C
from . import _native

__all__ = ["functional_call"]


def _key(t):
    """Which tensor t is: ember hands out a new Python object for each access to a parameter,
    so tensors are told apart by their memory and layout rather than by object identity."""
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))


def _named_tensors(module):
    """(name, tensor) for every parameter and buffer, each name of a tied tensor included (as
    PyTorch's named_parameters(remove_duplicate=False))."""
    for prefix, mod in module.named_modules():
        params, buffers, _ = mod._registered()
        for name, t in list(params) + [(n, b) for n, b, _ in buffers]:
            if t is not None:
                yield (prefix + "." + name if prefix else name), t


def _untie_named_tensors_map(module, parameters_and_buffers):
    """The given map with a value for every name tied to a given name (a tensor shared by
    several attributes), refusing different values for one tied tensor."""
    names_of = {}
    for name, tensor in _named_tensors(module):
        names_of.setdefault(_key(tensor), set()).add(name)
    tied_names_map = {}
    for tied_names in names_of.values():
        if len(tied_names) > 1:
            for tied_name in tied_names:
                tied_names_map[tied_name] = tied_names

    given_names = set(parameters_and_buffers.keys())
    given_names_for_tied_tensors = {n for n in given_names if n in tied_names_map}
    for given_name in given_names_for_tied_tensors:
        tied_names = tied_names_map[given_name]
        values = {_key(parameters_and_buffers[n]) for n in tied_names
                  if n in parameters_and_buffers}
        if len(tied_names & given_names_for_tied_tensors) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, "
                             f"which are tied. Consider using tie_weights=False")

    untied = parameters_and_buffers.copy()
    for given_name in given_names_for_tied_tensors:
        for tied_name in tied_names_map[given_name]:
            untied[tied_name] = parameters_and_buffers[given_name]
    return untied


_MISSING = object()


def _swap(module, name, tensor):
    """Puts tensor (or _MISSING: removes it) at the dotted name; returns what was there
    (_MISSING for an attribute that did not exist)."""
    owner_name, _, leaf = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, _C.Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if isinstance(type(owner).__dict__.get(leaf), property):
        raise ValueError(f"functional_call: '{name}' is parametrized; ember cannot replace a "
                         f"parametrized tensor, pass its original "
                         f"('{owner_name + '.' if owner_name else ''}parametrizations.{leaf}"
                         f".original') instead")
    kind, _ = _native.slot_kind(owner, leaf)
    if kind is not None:
        orig = getattr(owner, leaf)
        _native.put_in_slot(owner, leaf, None if tensor is _MISSING else tensor)
        return orig
    orig = getattr(owner, leaf) if hasattr(owner, leaf) else _MISSING
    if orig is not _MISSING and not isinstance(orig, _C.Tensor):
        raise TypeError(f"attribute `{leaf}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(owner, leaf, tensor)
    elif hasattr(owner, leaf):
        delattr(owner, leaf)
    return orig


def _check_keys(module, keys):
    valid = {name for name, _ in _named_tensors(module)}
    keys = set(keys)
    return sorted(valid - keys), sorted(keys - valid)


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    """Within the block, the module holds the given tensors."""
    untied = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        missing_keys, unexpected_keys = _check_keys(module, untied)
        error_msgs = []
        if len(unexpected_keys) > 0:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if len(missing_keys) > 0:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if len(error_msgs) > 0:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(error_msgs)))
    originals = {}
    try:
        for name, tensor in untied.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        current = {name: _swap(module, name, orig) for name, orig in originals.items()}
        # A tensor the module assigned in place of a given one goes back to the caller.
        for name in parameters_and_buffers:
            now = current.get(name, _MISSING)
            given = parameters_and_buffers[name]
            if isinstance(now, _C.Tensor) and (not isinstance(given, _C.Tensor)
                                               or _key(now) != _key(given)):
                parameters_and_buffers[name] = now


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """module(*args, **kwargs) with the parameters and buffers named in parameters_and_buffers
    (a dict, or an iterable of (name, tensor) pairs such as named_parameters()) replaced by the
    given tensors; the module is unchanged afterwards. args: a tuple, or one argument.
    tie_weights: a value given for one of several tied names is used for all of them. strict:
    the names must be exactly the module's parameters and buffers."""
    if isinstance(parameters_and_buffers, dict):
        normalized = parameters_and_buffers
    else:
        if not isinstance(parameters_and_buffers, Iterable):
            raise ValueError("Expected parameters_and_buffers to be a dict or an iterable of "
                             f"(name, Tensor) pairs, but got {type(parameters_and_buffers)}")
        normalized = {}
        repeated_keys = []
        for item in parameters_and_buffers:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise ValueError("Expected parameters_and_buffers to contain (name, Tensor) "
                                 "pairs")
            name, value = item
            if name in normalized:
                repeated_keys.append(name)
            normalized[name] = value
        if repeated_keys:
            raise ValueError(f"{sorted(set(repeated_keys))} appeared multiple times; behavior "
                             "of functional call is ambiguous")
    from ..parallel import DataParallel
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, normalized, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
