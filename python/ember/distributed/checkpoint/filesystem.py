"""torch.distributed.checkpoint.filesystem: a checkpoint as a directory, PyTorch's layout. Each
rank writes one file `__<rank>_<i>.distcp` of items back to back (a tensor chunk as torch.save
writes it, any other value as the torch.save of that value); the coordinator writes `.metadata`,
a pickle of Metadata whose storage_data says where each item's bytes are.

Note [Checkpoint metadata pickle]: PyTorch reads `.metadata` with pickle.load, so ember writes the
names PyTorch has (torch.distributed.checkpoint.metadata.Metadata, torch.Size, torch.float32,
torch.serialization._get_layout) and reads them back as ember's, from an allow-list: a checkpoint
is data, and nothing else in it is imported.

Note [Whole checkpoints]: a save never overwrites what the current `.metadata` refers to. Its files
take the lowest indices the old metadata does not use, `.metadata` is replaced by one rename once
every rank has written and synced, and only then are the old files removed. A rank killed mid-save
leaves the previous checkpoint as it was (and some unreferenced files the next save reuses)."""
import io
import os
import pathlib
import pickle
import re
import uuid
from dataclasses import dataclass

from ... import _C
from ..._size import Size
from ...serialization import _TorchGlobal
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       StorageMeta, TensorProperties, TensorStorageMetadata, _MEM_FORMAT_ENCODING)

_metadata_fn = ".metadata"
DEFAULT_SUFFIX = ".distcp"
_DATA_FILE = re.compile(r"__(\d+)_(\d+)\.distcp$")


@dataclass
class _StorageInfo:
    """Where one item's bytes are: a file of the checkpoint, an offset and a length."""
    relative_path: str
    offset: int
    length: int


# --- the metadata pickle (Note [Checkpoint metadata pickle]) ---

_CLASSES = {c.__name__: c for c in (Metadata, TensorStorageMetadata, BytesStorageMetadata,
                                    ChunkStorageMetadata, TensorProperties, StorageMeta,
                                    MetadataIndex, _MEM_FORMAT_ENCODING)}
_TORCH_MODULE = {**{name: "torch.distributed.checkpoint.metadata" for name in _CLASSES},
                 "_StorageInfo": "torch.distributed.checkpoint.filesystem"}
_CLASSES["_StorageInfo"] = _StorageInfo


def _get_layout(name):
    import ember
    if name != "torch.strided":
        raise pickle.UnpicklingError(f"a checkpoint tensor of layout {name}: ember has only "
                                     "torch.strided")
    return ember.strided


class _MetadataPickler(pickle._Pickler):
    def reducer_override(self, obj):
        import ember
        if isinstance(obj, Size):
            return _TorchGlobal("torch", "Size"), (tuple(obj),)
        if isinstance(obj, _C.dtype):
            return repr(obj).split(".")[-1]  # a dtype is a global: torch.float32
        if isinstance(obj, _MEM_FORMAT_ENCODING):  # as PyTorch writes it: the class called
            return _MEM_FORMAT_ENCODING, (obj.value,)
        if obj is ember.strided:
            return _TorchGlobal("torch.serialization", "_get_layout"), ("torch.strided",)
        return NotImplemented

    def save_global(self, obj, name=None):
        if isinstance(obj, _TorchGlobal):
            return self._write_global(obj, None)
        if isinstance(obj, _C.dtype):
            return self._write_global(_TorchGlobal("torch", name), obj)
        module = _TORCH_MODULE.get(getattr(obj, "__name__", None))
        if module is not None and _CLASSES.get(obj.__name__) is obj:
            return self._write_global(_TorchGlobal(module, obj.__name__), None)
        super().save_global(obj, name)

    def _write_global(self, g, obj):
        self.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode("utf-8"))
        if obj is not None:
            self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)


_MetadataPickler.dispatch[_TorchGlobal] = _MetadataPickler.save_global


class _MetadataUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        import ember
        if module in ("torch.distributed.checkpoint.metadata",
                      "torch.distributed.checkpoint.filesystem",
                      "ember.distributed.checkpoint.metadata",
                      "ember.distributed.checkpoint.filesystem") and name in _CLASSES:
            return _CLASSES[name]
        if module in ("torch", "ember") and name == "Size":
            return Size
        if module in ("torch", "ember") and isinstance(getattr(ember, name, None), _C.dtype):
            return getattr(ember, name)
        if module == "torch.serialization" and name == "_get_layout":
            return _get_layout
        if module in ("pathlib", "pathlib._local") and name in ("PosixPath", "WindowsPath",
                                                               "PurePosixPath", "Path"):
            return getattr(pathlib, name)
        if module in ("collections", "builtins") and name in ("OrderedDict", "set", "frozenset"):
            return getattr(__import__(module), name)
        raise pickle.UnpicklingError(f"a checkpoint's .metadata names {module}.{name}, which "
                                     "is not part of DCP's metadata: refused")


def _dump_metadata(metadata, f):
    _MetadataPickler(f, protocol=4).dump(metadata)


def _load_metadata(f):
    return _MetadataUnpickler(f).load()


# --- the files ---

def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _serialized(value):
    """An item's bytes: torch.save of a (contiguous) tensor chunk or of any other value."""
    from ...serialization import save
    buf = io.BytesIO()
    save(value, buf)
    return buf.getbuffer()


class FileSystemWriter:
    """Writes a checkpoint into the directory `path` (created if missing)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False, overwrite=True):
        self.path = pathlib.Path(path)
        self.sync_files = sync_files
        self.overwrite = overwrite
        self.save_id = str(uuid.uuid4())

    @property
    def checkpoint_id(self):
        return self.path

    @property
    def metadata_path(self):
        return self.path / _metadata_fn

    def reset(self, checkpoint_id=None):
        if checkpoint_id:
            self.path = pathlib.Path(checkpoint_id)
        self.save_id = str(uuid.uuid4())

    def _prepare(self):
        """The coordinator's first step: the directory, and the files the current metadata keeps
        (Note [Whole checkpoints])."""
        self.path.mkdir(parents=True, exist_ok=True)
        if not self.metadata_path.exists():
            return set()
        if not self.overwrite:
            raise RuntimeError(f"Checkpoint already exists and self.overwrite={self.overwrite}.")
        with open(self.metadata_path, "rb") as f:
            old = _load_metadata(f)
        return {info.relative_path for info in (old.storage_data or {}).values()}

    @staticmethod
    def _file_name(rank, taken):
        i = 0
        while f"__{rank}_{i}{DEFAULT_SUFFIX}" in taken:
            i += 1
        return f"__{rank}_{i}{DEFAULT_SUFFIX}"

    def _write(self, name, items):
        """Writes items [(MetadataIndex, value)] into one file; returns {index: _StorageInfo}."""
        out = {}
        with open(self.path / name, "wb") as f:
            for index, value in items:
                data = value.getbuffer() if isinstance(value, io.BytesIO) else _serialized(value)
                out[index] = _StorageInfo(name, f.tell(), len(data))
                f.write(data)
            f.flush()
            if self.sync_files:
                os.fsync(f.fileno())
        return out

    def _commit(self, metadata):
        """Puts metadata in place with one rename, then removes the files it no longer uses."""
        metadata.storage_meta = StorageMeta(checkpoint_id=self.path, save_id=self.save_id)
        tmp = self.path / (_metadata_fn + ".tmp")
        with open(tmp, "wb") as f:
            _dump_metadata(metadata, f)
            f.flush()
            if self.sync_files:
                os.fsync(f.fileno())
        os.replace(tmp, self.metadata_path)
        if self.sync_files:
            _fsync_dir(self.path)
        used = {info.relative_path for info in metadata.storage_data.values()}
        for entry in os.listdir(self.path):
            if _DATA_FILE.match(entry) and entry not in used:
                os.remove(self.path / entry)


class FileSystemReader:
    """Reads a checkpoint from the directory `path`."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.load_id = str(uuid.uuid4())

    @property
    def checkpoint_id(self):
        return self.path

    def reset(self, checkpoint_id=None):
        if checkpoint_id:
            self.path = pathlib.Path(checkpoint_id)
        self.load_id = str(uuid.uuid4())

    def read_metadata(self):
        path = self.path / _metadata_fn
        if not path.exists():
            raise FileNotFoundError(f"no checkpoint at {self.path}: {_metadata_fn} is missing "
                                    "(a save that did not finish leaves none)")
        with open(path, "rb") as f:
            metadata = _load_metadata(f)
        if getattr(metadata, "storage_meta", None) is None:
            metadata.storage_meta = StorageMeta()
        metadata.storage_meta.load_id = self.load_id
        return metadata

    def _read(self, info):
        """One item's bytes."""
        with open(self.path / info.relative_path, "rb") as f:
            f.seek(info.offset)
            data = f.read(info.length)
        if len(data) != info.length:
            raise RuntimeError(f"checkpoint file {info.relative_path} is {info.offset + len(data)}"
                               f" bytes, its metadata says an item ends at "
                               f"{info.offset + info.length}: the file is truncated")
        return data


__all__ = ["FileSystemWriter", "FileSystemReader"]
