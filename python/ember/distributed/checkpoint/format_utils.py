"""torch.distributed.checkpoint.format_utils: a sharded checkpoint as one file and back, in one
process. dcp_to_torch_save and torch_save_to_dcp are PyTorch's; dcp_to_safetensors is ember's:
it writes the header from the metadata first, then assembles and writes one tensor at a time, so
consolidating a model needs the memory of about one of its tensors, not of the model."""
import json
import os

from ... import _C
from ...serialization import _to_bytes
from ._traverse import set_element
from .default_planner import fill_tensor
from .filesystem import FileSystemReader
from .metadata import BytesStorageMetadata, MetadataIndex
from .state_dict_loader import _load_bytes, _load_tensor
from .state_dict_saver import save

_SAFETENSORS_DTYPE = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16",
                      "int32": "I32", "int64": "I64", "float16": "F16", "bfloat16": "BF16",
                      "float32": "F32", "float64": "F64", "complex64": "C64",
                      "complex128": "C128"}


def _whole(reader, metadata, name, entry):
    """The saved tensor `name`, assembled from its chunks."""
    out = _C._ops.empty(tuple(entry.size), dtype=entry.properties.dtype)
    fill_tensor(name, out, entry, lambda i: _load_tensor(reader._read(
        metadata.storage_data[MetadataIndex(name, entry.chunks[i].offsets)])))
    return out


def _items(dcp_checkpoint_dir):
    reader = FileSystemReader(dcp_checkpoint_dir)
    metadata = reader.read_metadata()
    for name, entry in metadata.state_dict_metadata.items():
        path = (metadata.planner_data or {}).get(name, (name,))
        if isinstance(entry, BytesStorageMetadata):
            value = _load_bytes(reader._read(metadata.storage_data[MetadataIndex(name)]))
        else:
            value = None
        yield name, path, entry, value, (lambda n=name, e=entry:
                                         _whole(reader, metadata, n, e))


def dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path):
    """The checkpoint as one torch.save file of the nested state dict."""
    from ...serialization import save as torch_save
    state = {}
    for _, path, entry, value, whole in _items(dcp_checkpoint_dir):
        set_element(state, path, value if isinstance(entry, BytesStorageMetadata) else whole())
    torch_save(state, torch_save_path)


def torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir):
    """A torch.save file of a state dict as a one-rank sharded checkpoint."""
    from ...serialization import load
    save(load(torch_save_path, weights_only=False), checkpoint_id=dcp_checkpoint_dir,
         no_dist=True)


def dcp_to_safetensors(dcp_checkpoint_dir, path, metadata=None):
    """The checkpoint's tensors in one safetensors file under their flattened names
    ("model.layers.0.weight"); values that are not tensors go to its metadata as JSON where they
    can (under "ember.values"). Holds about one tensor at a time."""
    items = list(_items(dcp_checkpoint_dir))
    header, offset, values = {}, 0, {}
    for name, _, entry, value, _ in items:
        if isinstance(entry, BytesStorageMetadata):
            try:
                values[name] = json.loads(json.dumps(value))
            except TypeError:
                pass  # not JSON: left out, as safetensors holds tensors only
            continue
        dtype = str(entry.properties.dtype).rpartition(".")[2]
        if dtype not in _SAFETENSORS_DTYPE:
            raise TypeError(f"dcp_to_safetensors: {name} is {dtype}, which safetensors has no "
                            "code for")
        n = 1
        for s in entry.size:
            n *= s
        nbytes = n * _C.tensor([], dtype=entry.properties.dtype).element_size()
        header[name] = {"dtype": _SAFETENSORS_DTYPE[dtype], "shape": list(entry.size),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    meta = dict(metadata or {})
    if values:
        meta["ember.values"] = json.dumps(values)
    if meta:
        header["__metadata__"] = meta
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the data section starts 8-byte aligned
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for name, _, entry, _, whole in items:
            if not isinstance(entry, BytesStorageMetadata):
                t = whole()
                f.write(_to_bytes(t))
                del t
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


__all__ = ["dcp_to_torch_save", "torch_save_to_dcp", "dcp_to_safetensors"]
