"""ember.save and ember.load, as torch.save and torch.load.

Any picklable object saves: tensors, state dicts, optimizer states, whole modules, NumPy arrays,
dicts of them. The file is PyTorch's own format (a zip holding `data.pkl`, each tensor's bytes
under `data/<key>` and `version`), so `torch.load` reads what ember saved and ember reads what
`torch.save` wrote: a state dict or an optimizer's state moves between the two libraries either
way. A path ending in `.safetensors` is written as safetensors instead (no pickle: the format the
ecosystem shares for weights; a flat dict of tensors, or a checkpoint one level deep).

As with torch.load, loading a pickle can run code the file names: load files you trust.
"""
import collections
import io
import json
import os
import pickle
import zipfile

import numpy as np

from . import _C
from ._C import Tensor

__all__ = ["save", "load"]

# --- how ember's dtypes are stored: PyTorch's storage class name and the bytes' NumPy type ---
_STORAGES = {
    "float32": ("FloatStorage", np.float32), "float64": ("DoubleStorage", np.float64),
    "float16": ("HalfStorage", np.float16), "bfloat16": ("BFloat16Storage", np.uint16),
    "int64": ("LongStorage", np.int64), "int32": ("IntStorage", np.int32),
    "uint8": ("ByteStorage", np.uint8), "bool": ("BoolStorage", np.bool_),
}
_BY_STORAGE = {storage: dtype for dtype, (storage, _) in _STORAGES.items()}


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _to_bytes(t):
    """A tensor's elements in row-major order as raw bytes (bfloat16 as its 16-bit patterns)."""
    t = t.detach().cpu().contiguous()
    name = _dtype_name(t.dtype)
    if name == "bfloat16":
        bits = t.to(_C.float32).numpy().view(np.uint32) >> 16  # exact: every bfloat16 is a float32
        return bits.astype(np.uint16).tobytes()
    return t.numpy().tobytes()


def _from_bytes(data, dtype_name, offset, size, stride):
    """The tensor PyTorch's _rebuild_tensor_v2 describes: elements of `dtype_name` in `data`,
    viewed at offset with size and stride (in elements), copied into an ember tensor."""
    np_type = _STORAGES[dtype_name][1]
    flat = np.frombuffer(data, dtype=np_type)
    item = flat.itemsize
    if len(size) == 0 or all(s > 0 for s in size):
        view = np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(size),
                                               strides=tuple(s * item for s in stride))
    else:
        view = np.empty(tuple(size), dtype=np_type)
    if dtype_name == "bfloat16":
        f32 = (view.astype(np.uint32) << 16).view(np.float32)
        return _C.from_numpy(np.ascontiguousarray(f32)).to(_C.bfloat16)
    return _C.from_numpy(np.array(view, copy=True))


# --- writing PyTorch's pickle without PyTorch: the globals it names are written by name ---

class _TorchGlobal:
    """A callable or class that PyTorch's loader finds as module.name (written as such)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle requires a callable; only PyTorch's loader calls it
        raise TypeError(f"{self.module}.{self.name} is written by name, not called")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_STORAGE_CLASSES = {d: _TorchGlobal("torch", s) for d, (s, _) in _STORAGES.items()}


class _StorageRef:
    """A tensor's bytes, pickled as PyTorch's persistent id ('storage', class, key, 'cpu', n)."""

    def __init__(self, key, dtype_name, numel):
        self.key, self.dtype_name, self.numel = key, dtype_name, numel


class _Pickler(pickle._Pickler):
    """Pickles as torch.save does: tensors by reference to records of their bytes."""

    def __init__(self, file, protocol, records):
        super().__init__(file, protocol)
        self.records = records  # key -> bytes, filled as tensors are met
        self.keys = {}

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _STORAGE_CLASSES[obj.dtype_name], obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if obj.requires_grad and not obj.is_leaf:
                raise RuntimeError("Cowardly refusing to serialize a non-leaf tensor which "
                                   "requires_grad, since autograd does not support crossing "
                                   "process boundaries. If you just want to transfer the data, "
                                   "call detach() on the tensor before serializing")
            plain = (_REBUILD_TENSOR, (self._storage(obj), 0, tuple(obj.shape),
                                       _contiguous_strides(obj.shape), obj.requires_grad,
                                       collections.OrderedDict()))
            if isinstance(obj, Parameter):
                return (_REBUILD_PARAMETER, (_Rebuilt(plain), obj.requires_grad,
                                             collections.OrderedDict()))
            return plain
        if isinstance(obj, _Rebuilt):
            return obj.reduced
        return NotImplemented

    def _storage(self, t):
        ident = (t.data_ptr(), _dtype_name(t.dtype), tuple(t.shape), t.stride())
        key = self.keys.get(ident)
        if key is None:
            key = self.keys[ident] = str(len(self.records))
            self.records[key] = _to_bytes(t)
        return _StorageRef(key, _dtype_name(t.dtype), t.numel())

    def save_global(self, obj, name=None):
        if isinstance(obj, _TorchGlobal):
            memoized = self.memo.get(id(obj))
            if memoized is not None:
                self.write(self.get(memoized[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save_global(obj, name)

    dispatch = dict(pickle._Pickler.dispatch)


# _TorchGlobal instances are saved as globals (the dispatch table is looked up by type).
_Pickler.dispatch[_TorchGlobal] = _Pickler.save_global


class _Rebuilt:
    """A reduce tuple nested inside another (a Parameter's tensor)."""

    def __init__(self, reduced):
        self.reduced = reduced


def _contiguous_strides(shape):
    strides, n = [], 1
    for s in reversed(shape):
        strides.append(n)
        n *= max(s, 1)
    return tuple(reversed(strides))


def _is_safetensors_path(f):
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors")


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         metadata=None):
    """Saves obj to f (a path or a writable binary file), as torch.save; a path ending in
    .safetensors is written as safetensors."""
    if _is_safetensors_path(f):
        return _save_safetensors(obj, f, metadata)
    records = {}
    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, records).dump(obj)
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        # Written beside the target and renamed over it: a crash mid-save keeps the old file.
        tmp = os.fspath(f) + ".tmp"
        with open(tmp, "wb") as out:
            _write_zip(out, name, buf.getvalue(), records)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, f)
    else:
        _write_zip(f, name, buf.getvalue(), records)


def _write_zip(out, name, pickled, records):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", pickled)
        for key, data in records.items():
            z.writestr(f"{name}/data/{key}", data)
        z.writestr(f"{name}/version", "3\n")


# --- reading ---

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    data, dtype_name, location = storage
    t = _from_bytes(data, dtype_name, storage_offset, size, stride)
    t = _place(t, location)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *args):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


class _Unpickler(pickle.Unpickler):
    """Reads torch.save's pickle: PyTorch's names are found in ember (torch.X -> ember.X)."""

    def __init__(self, file, records, map_location):
        super().__init__(file)
        self.records, self.map_location = records, map_location

    def find_class(self, module, name):
        if module == "torch._utils":
            found = {"_rebuild_tensor_v2": _rebuild_tensor_v2,
                     "_rebuild_parameter": _rebuild_parameter,
                     "_rebuild_parameter_with_state": _rebuild_parameter_with_state}.get(name)
            if found:
                return found
        if module == "torch" and name in _BY_STORAGE:
            return _BY_STORAGE[name]
        if module == "torch" or module.startswith("torch."):
            module = "ember" + module[len("torch"):]
        elif module == "torchvision" or module.startswith("torchvision."):
            module = "ember.vision" + module[len("torchvision"):]
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, storage_type, key, location, numel = pid[:5]
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        # storage_type is the dtype name (from find_class) or, for PyTorch 2's untyped storages,
        # a dtype object.
        dtype_name = storage_type if isinstance(storage_type, str) else _dtype_name(storage_type)
        return (self.records(key), dtype_name, _location(location, self.map_location))


def _location(saved, map_location):
    if map_location is None:
        return saved
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    if callable(map_location):
        return map_location  # applied to the tensor in _place
    return str(map_location)


def _place(t, location):
    if callable(location):
        out = location(t, "cpu")
        return t if out is None else out
    if location in (None, "cpu"):
        return t
    if isinstance(location, str) and location.startswith("cuda") and not _C._cuda.is_available():
        raise RuntimeError(f"Attempting to deserialize object on a CUDA device ({location}) but "
                           "CUDA is not available: pass map_location='cpu' to ember.load")
    return t.to(location)


def load(f, map_location=None, pickle_module=pickle, *, weights_only=False, **pickle_load_args):
    """Reads what save (or torch.save, or a safetensors writer) wrote; tensors go to
    map_location (a device, a string, a dict of locations, or a function) or where they were."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            head = fh.read(4)
        if head[:2] != b"PK":
            return _load_safetensors(f, map_location)
        with open(f, "rb") as fh:
            return _load_zip(fh, map_location)
    data = f.read()
    if data[:2] != b"PK":
        raise RuntimeError("ember.load: the file is not in torch.save's zip format (ember reads "
                           "safetensors from a path only)")
    return _load_zip(io.BytesIO(data), map_location)


def _load_zip(fh, map_location):
    with zipfile.ZipFile(fh) as z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if not pkl:
            raise RuntimeError("ember.load: the zip file holds no data.pkl (not a torch.save file)")
        prefix = pkl[0][:-len("data.pkl")]

        def record(key):
            return z.read(f"{prefix}data/{key}")

        return _Unpickler(io.BytesIO(z.read(pkl[0])), record, map_location).load()


# --- safetensors: weights without pickle ---

_NESTED = "ember.nested"  # metadata key: the top-level keys that were dicts of tensors
_VALUES = "ember.values"  # metadata key: JSON of the non-tensor top-level values


def _save_safetensors(obj, f, metadata):
    if isinstance(obj, _C._nn.Module):
        obj = obj.state_dict()
    if isinstance(obj, Tensor):
        obj = {"": obj}
    if not isinstance(obj, dict):
        raise TypeError(f"ember.save: a .safetensors file holds a tensor, a module or a dict, got "
                        f"{type(obj).__name__}")
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
                                "neither a tensor, a dict of tensors nor JSON data; safetensors "
                                "cannot hold it (save to a path not ending in .safetensors)"
                                ) from None
            values[key] = value
    meta = dict(metadata or {})
    if nested:
        meta[_NESTED] = json.dumps(nested)
    if values:
        meta[_VALUES] = json.dumps(values)
    _C._io.save_safetensors(tensors, os.fspath(f), meta)


def _load_safetensors(f, map_location):
    if isinstance(map_location, (dict,)) or callable(map_location):
        map_location = None
    tensors, meta = _C._io.load_safetensors(os.fspath(f), map_location)
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


# torch.serialization's allow-list for weights_only loading. ember.load reads torch.save's zip
# format with NumPy and its own unpickler of tensors, the same whether weights_only is set or
# not; the list is kept so that programs that register their classes run.
_safe_globals = []


def add_safe_globals(safe_globals):
    """Marks classes (or (class, name) pairs) as safe for weights_only loading."""
    _safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


class safe_globals:
    """with ember.serialization.safe_globals([...]): the classes count as safe inside the block."""

    def __init__(self, safe_globals):
        self._added = list(safe_globals)

    def __enter__(self):
        _safe_globals.extend(self._added)

    def __exit__(self, *exc):
        for g in self._added:
            _safe_globals.remove(g)
