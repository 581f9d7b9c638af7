"""ember.save and ember.load, as torch.save and torch.load.

Any picklable object saves: tensors, state dicts, optimizer states, whole modules, NumPy arrays,
dicts of them. The file is PyTorch's own format (a zip holding `data.pkl`, each tensor's bytes
under `data/<key>` and `version`), so `torch.load` reads what ember saved and ember reads what
`torch.save` wrote: a state dict or an optimizer's state moves between the two libraries either
way. A path ending in `.safetensors` is written as safetensors instead (no pickle: the format the
ecosystem shares for weights; a flat dict of tensors, or a checkpoint one level deep).

Loading is restricted as PyTorch 2.6's (weights_only=True, the default): a file may name only
tensors, containers and the globals marked safe, and nothing it names runs (_weights_only.py).
weights_only=False (or TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1) reads any pickle, which can run code
the file names: only for files you trust.
"""
import _compat_pickle
import collections
import io
import json
import os
import pickle
import zipfile
import zlib

import numpy as np

from . import _C, _weights_only
from ._C import Tensor
from ._weights_only import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals"]

# --- how ember's dtypes are stored: PyTorch's storage class name and the bytes' NumPy type ---
_STORAGES = {
    "float32": ("FloatStorage", np.float32), "float64": ("DoubleStorage", np.float64),
    "float16": ("HalfStorage", np.float16), "bfloat16": ("BFloat16Storage", np.uint16),
    "int64": ("LongStorage", np.int64), "int32": ("IntStorage", np.int32),
    "int16": ("ShortStorage", np.int16), "int8": ("CharStorage", np.int8),
    "uint8": ("ByteStorage", np.uint8), "bool": ("BoolStorage", np.bool_),
    "complex64": ("ComplexFloatStorage", np.complex64),
    "complex128": ("ComplexDoubleStorage", np.complex128),
}
_BY_STORAGE = {storage: dtype for dtype, (storage, _) in _STORAGES.items()}
# Dtypes with no typed storage class: PyTorch 2 writes them as bytes (torch.storage.UntypedStorage)
# with the dtype named in _rebuild_tensor_v3; each element read as NumPy's type of its size
# (complex32: a pair of float16, moved as one uint32).
_UNTYPED = {"complex32": np.uint32}
_BY_STORAGE["storage.UntypedStorage"] = "untyped"


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _to_bytes(t):
    """A tensor's elements in row-major order as raw bytes (bfloat16 as its 16-bit patterns)."""
    t = t.detach().cpu().contiguous()
    name = _dtype_name(t.dtype)
    if name == "bfloat16":
        bits = t.to(_C.float32).numpy().view(np.uint32) >> 16  # exact: every bfloat16 is a float32
        return bits.astype(np.uint16).tobytes()
    if name == "complex32":
        return _C._ops.view_as_real(t).numpy().tobytes()
    return t.numpy().tobytes()


def _from_bytes(data, dtype_name, offset, size, stride):
    """The tensor PyTorch's _rebuild_tensor_v2 describes: elements of `dtype_name` in `data`,
    viewed at offset with size and stride (in elements), copied into an ember tensor."""
    np_type = _UNTYPED[dtype_name] if dtype_name in _UNTYPED else _STORAGES[dtype_name][1]
    item = np.dtype(np_type).itemsize
    _check_view(len(data), item, offset, size, stride)
    flat = np.frombuffer(data, dtype=np_type, count=len(data) // item)
    if len(size) == 0 or all(s > 0 for s in size):
        view = np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(size),
                                               strides=tuple(s * item for s in stride))
    else:
        view = np.empty(tuple(size), dtype=np_type)
    if dtype_name == "bfloat16":
        f32 = (view.astype(np.uint32) << 16).view(np.float32)
        return _C.from_numpy(np.ascontiguousarray(f32)).to(_C.bfloat16)
    if dtype_name == "complex32":
        pairs = np.array(view, copy=True).view(np.float16).reshape(tuple(size) + (2,))
        return _C._ops.view_as_complex(_C.from_numpy(pairs))
    return _C.from_numpy(np.array(view, copy=True))


def _check_view(nbytes, item, offset, size, stride):
    """That the view lies inside its storage (as_strided would read past it) and that copying it
    out costs a bounded multiple of the file's bytes (stride 0 can describe any size)."""
    ints = lambda v: isinstance(v, (tuple, list)) and all(isinstance(x, int) for x in v)
    if not isinstance(offset, int) or not ints(size) or not ints(stride) or \
            len(size) != len(stride):
        raise pickle.UnpicklingError(f"a tensor's offset, size and stride are malformed: "
                                     f"{offset!r}, {size!r}, {stride!r}")
    if offset < 0 or any(x < 0 for x in size) or any(x < 0 for x in stride):
        raise pickle.UnpicklingError(f"a tensor has a negative offset, size or stride: "
                                     f"{offset}, {list(size)}, {list(stride)}")
    numel = 1
    for x in size:
        numel *= x
    if numel == 0:
        return
    last = offset + sum((n - 1) * st for n, st in zip(size, stride))
    if (last + 1) * item > nbytes:
        raise pickle.UnpicklingError(f"a tensor of size {list(size)} and stride {list(stride)} "
                                     f"at offset {offset} reaches past its storage of "
                                     f"{nbytes // item} elements")
    if numel * item > 64 * max(nbytes, 1 << 20):
        raise pickle.UnpicklingError(f"a tensor of size {list(size)} is {numel * item} bytes "
                                     f"made from a storage of {nbytes}: refused")


# --- writing PyTorch's pickle without PyTorch: the globals it names are written by name ---

class _TorchGlobal:
    """A callable or class that PyTorch's loader finds as module.name (written as such)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle requires a callable; only PyTorch's loader calls it
        raise TypeError(f"{self.module}.{self.name} is written by name, not called")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _TorchGlobal("torch.storage", "UntypedStorage")
_DTYPE_GLOBALS = {d: _TorchGlobal("torch", d) for d in _UNTYPED}
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
            if obj.dtype_name in _UNTYPED:
                return ("storage", _UNTYPED_STORAGE, obj.key, "cpu",
                        obj.numel * getattr(_C, obj.dtype_name).itemsize)
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
            args = (self._storage(obj), 0, tuple(obj.shape), _contiguous_strides(obj.shape),
                    obj.requires_grad, collections.OrderedDict())
            if _dtype_name(obj.dtype) in _UNTYPED:  # PyTorch 2's form: the dtype named
                plain = (_REBUILD_TENSOR_V3, args + (_DTYPE_GLOBALS[_dtype_name(obj.dtype)],))
            else:
                plain = (_REBUILD_TENSOR, args)
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
    _weights_only.record_written(buf.getvalue())
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

def _rebuild(storage, dtype_name, storage_offset, size, stride, requires_grad):
    data, _, location = storage
    t = _place(_from_bytes(data, dtype_name, storage_offset, size, stride), location)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    """A typed storage's elements (its dtype named by the storage's class)."""
    return _rebuild(storage, storage[1], storage_offset, size, stride, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """PyTorch 2's rebuild: bytes of an untyped storage read as `dtype`."""
    return _rebuild(storage, _dtype_name(dtype), storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *args):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


_REBUILDS = {"_rebuild_tensor_v2": _rebuild_tensor_v2, "_rebuild_tensor_v3": _rebuild_tensor_v3,
             "_rebuild_parameter": _rebuild_parameter,
             "_rebuild_parameter_with_state": _rebuild_parameter_with_state}
_allowed = None  # PyTorch's allow-list in ember's objects, made at the first weights_only load


def _weights_only_global(module, name):
    """A global of a weights_only file: from the allow-list only (_weights_only.py)."""
    global _allowed
    # Protocol 2 writes Python 2's names (__builtin__.set): read as Python 3's.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    if _allowed is None:
        import ember
        _allowed = _weights_only.default_globals(ember, _REBUILDS, _BY_STORAGE)
    return _weights_only.allowed_global(module, name, _allowed)


def _persistent(pid, records, map_location):
    """A storage the pickle refers to: (its bytes, its dtype's name, where it goes)."""
    if len(pid) < 5 or pid[0] != "storage":
        raise pickle.UnpicklingError(f"unknown persistent id {pid[:1]!r}")
    kind, storage_type, key, location, numel = pid[:5]
    if not isinstance(key, str):
        raise pickle.UnpicklingError(f"a storage key must be a string, got {key!r}")
    # storage_type is the dtype name (from find_class) or, for PyTorch 2's untyped storages,
    # a dtype object.
    dtype_name = storage_type if isinstance(storage_type, str) else _dtype_name(storage_type)
    if dtype_name not in _STORAGES and dtype_name != "untyped":
        raise pickle.UnpicklingError(f"a storage of unknown type {storage_type!r}")
    return (records(key), dtype_name, _location(location, map_location))


class _Unpickler(pickle.Unpickler):
    """Reads any torch.save pickle (weights_only=False): PyTorch's names are found in ember
    (torch.X -> ember.X)."""

    def __init__(self, file, records, map_location):
        super().__init__(file)
        self.records, self.map_location = records, map_location

    def find_class(self, module, name):
        if module == "torch._utils" and name in _REBUILDS:
            return _REBUILDS[name]
        if module == "torch" and name in _BY_STORAGE:
            return _BY_STORAGE[name]
        if module == "torch.storage" and name == "UntypedStorage":
            return _BY_STORAGE["storage.UntypedStorage"]
        if module == "torch" or module.startswith("torch."):
            module = "ember" + module[len("torch"):]
        elif module == "torchvision" or module.startswith("torchvision."):
            module = "ember.vision" + module[len("torchvision"):]
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return _persistent(pid, self.records, self.map_location)


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


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Reads what save (or torch.save, or a safetensors writer) wrote; tensors go to
    map_location (a device, a string, a dict of locations, or a function) or where they were.
    weights_only (PyTorch 2.6's default, True) refuses any global outside the allow-list."""
    weights_only, defaulted = _weights_only.resolve(weights_only, pickle_module)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            head = fh.read(4)
        if head[:2] != b"PK":
            return _load_safetensors(f, map_location)
        with open(f, "rb") as fh:
            return _load_zip(fh, map_location, weights_only, defaulted)
    data = f.read()
    if data[:2] != b"PK":
        raise RuntimeError("ember.load: the file is not in torch.save's zip format (ember reads "
                           "safetensors from a path only)")
    return _load_zip(io.BytesIO(data), map_location, weights_only, defaulted)


def _load_zip(fh, map_location, weights_only, defaulted):
    # Everything the zip reader can raise on a damaged file becomes one clear error.
    try:
        with zipfile.ZipFile(fh) as z:
            names = z.namelist()
            pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
            if not pkl:
                raise RuntimeError("ember.load: the zip file holds no data.pkl (not a torch.save "
                                   "file)")
            prefix = pkl[0][:-len("data.pkl")]
            pickled = z.read(pkl[0])
            records = {n[len(prefix) + 5:]: n for n in names if n.startswith(prefix + "data/")}

            def record(key):
                if key not in records:
                    raise RuntimeError(f"ember.load: the file names a storage {key!r} that it "
                                       "does not hold")
                return z.read(records[key])

            return _unpickle(pickled, record, map_location, weights_only, defaulted)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            NotImplementedError, zlib.error) as err:
        raise RuntimeError(f"ember.load: not a readable torch.save file "
                           f"({type(err).__name__}: {err})") from None


def _unpickle(pickled, record, map_location, weights_only, defaulted):
    if weights_only and defaulted and _weights_only.written_here(pickled):
        weights_only = False  # Note [Files this process wrote]
    if not weights_only:
        return _Unpickler(io.BytesIO(pickled), record, map_location).load()
    unpickler = _weights_only.Unpickler(
        pickled, _weights_only_global, lambda pid: _persistent(pid, record, map_location),
        lambda: _weights_only.allowed_build_types(_allowed or {}))
    try:
        return unpickler.load()
    except pickle.UnpicklingError as err:
        raise pickle.UnpicklingError(_weights_only.failure_message(err, defaulted)) from None
    except RuntimeError:
        raise  # ember's own errors (a missing storage record), already clear
    except (Exception, MemoryError, RecursionError) as err:  # noqa: BLE001  (whatever a corrupt
        # pickle makes the allowed constructors raise: IndexError, LookupError, TypeError, ...)
        raise pickle.UnpicklingError(_weights_only.failure_message(
            f"the pickle is corrupt or not one torch.save writes "
            f"({type(err).__name__}: {err})", defaulted)) from None


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
