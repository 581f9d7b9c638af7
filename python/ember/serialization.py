"""ember.save and ember.load: tensors, state dicts and checkpoints in safetensors files.

ember.save(model.state_dict(), "model.safetensors") writes a file PyTorch's safetensors reader
loads too, atomically (a crash mid-save keeps the previous file). A checkpoint dict one level deep
is kept as such: {"model": sd, "optimizer": sd, "epoch": 3} comes back from ember.load equal, its
dicts of tensors stored under "model.", "optimizer." and its numbers and strings in the file's
metadata. Never pickle.
"""
import json

from . import _C
from ._C import Tensor

_NESTED = "ember.nested"  # metadata key: the top-level keys that were dicts of tensors
_VALUES = "ember.values"  # metadata key: JSON of the non-tensor top-level values


def save(obj, f, metadata=None):
    """Saves a tensor, a dict of tensors (a state dict), a module's state dict, or a checkpoint
    dict of state dicts and plain values, to the path f."""
    if isinstance(obj, _C._nn.Module):
        obj = obj.state_dict()
    if isinstance(obj, Tensor):
        obj = {"": obj}
    if not isinstance(obj, dict):
        raise TypeError(f"ember.save: expected a tensor, a module or a dict, got {type(obj).__name__}")
    tensors, nested, values = {}, [], {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise TypeError(f"ember.save: keys must be strings, got {key!r}")
        if isinstance(value, Tensor):
            tensors[key] = value
        elif isinstance(value, dict) and all(isinstance(v, Tensor) for v in value.values()):
            nested.append(key)
            for k, v in value.items():
                tensors[f"{key}.{k}"] = v
        else:
            try:
                json.dumps(value)
            except TypeError:
                raise TypeError(f"ember.save: the value of {key!r} ({type(value).__name__}) is "
                                "neither a tensor, a dict of tensors nor JSON data") from None
            values[key] = value
    meta = dict(metadata or {})
    if nested:
        meta[_NESTED] = json.dumps(nested)
    if values:
        meta[_VALUES] = json.dumps(values)
    _C._io.save_safetensors(tensors, str(f), meta)


def load(f, map_location=None):
    """What save wrote: an OrderedDict of tensors, or the checkpoint dict; tensors are made on
    map_location (default the CPU)."""
    tensors, meta = _C._io.load_safetensors(str(f), map_location)
    if list(tensors) == [""]:
        return tensors[""]
    nested = json.loads(meta.get(_NESTED, "[]"))
    values = json.loads(meta.get(_VALUES, "{}"))
    if not nested and not values:
        return tensors
    out = {}
    for key in nested:
        out[key] = type(tensors)()
    for name, t in tensors.items():
        head, _, rest = name.partition(".")
        if head in out and rest:
            out[head][rest] = t
        else:
            out[name] = t
    out.update(values)
    return out
