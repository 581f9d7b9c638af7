"""torch.distributed.checkpoint.metadata: what a checkpoint's `.metadata` file holds. Each tensor
is described by its whole size and the chunks (offsets, sizes) that were saved; each other value
is bytes. The classes keep PyTorch's names and fields, so one `.metadata` pickle reads in both
(Note [Checkpoint metadata pickle] in filesystem.py)."""
import os
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Union

from ..._size import Size


@dataclass
class ChunkStorageMetadata:
    """One saved block of a tensor: where it starts in the whole and its size."""
    offsets: Size
    sizes: Size


class _MEM_FORMAT_ENCODING(Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


def _formats():
    import ember
    return {ember.contiguous_format: _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT,
            ember.channels_last: _MEM_FORMAT_ENCODING.TORCH_CHANNELS_LAST,
            ember.preserve_format: _MEM_FORMAT_ENCODING.TORCH_PRESERVE_FORMAT}


def _default_dtype():
    import ember
    return ember.get_default_dtype()


def _strided():
    import ember
    return ember.strided


def _contiguous():
    import ember
    return ember.contiguous_format


@dataclass
class TensorProperties:
    dtype: Any = field(default_factory=_default_dtype)
    layout: Any = field(default_factory=_strided)
    requires_grad: bool = False
    memory_format: Any = field(default_factory=_contiguous)
    pin_memory: bool = False

    # A memory format does not pickle: PyTorch writes its number, and so does ember.
    def __getstate__(self):
        encoding = _formats().get(self.memory_format)
        if encoding is None:
            raise RuntimeError(f"Invalid torch.memory_format: {self.memory_format}")
        return (self.dtype, self.layout, self.requires_grad, encoding, self.pin_memory)

    def __setstate__(self, state):
        self.dtype, self.layout, self.requires_grad, encoding, self.pin_memory = state
        by_encoding = {v: k for k, v in _formats().items()}
        if encoding not in by_encoding:
            raise RuntimeError(f"Invalid torch.memory_format encoding: {encoding}")
        self.memory_format = by_encoding[encoding]

    @staticmethod
    def create_from_tensor(tensor):
        return TensorProperties(dtype=tensor.dtype, requires_grad=tensor.requires_grad)


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: Size
    chunks: List[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    pass


STORAGE_TYPES = Union[TensorStorageMetadata, BytesStorageMetadata]
STATE_DICT_TYPE = Dict[str, Any]


@dataclass
class StorageMeta:
    checkpoint_id: Union[str, os.PathLike, None] = None
    save_id: Optional[str] = None
    load_id: Optional[str] = None


@dataclass
class Metadata:
    """Every saved value by its flattened name; planner_data maps each name to its path in the
    nested state dict; storage_data maps each MetadataIndex to where its bytes are."""
    state_dict_metadata: Dict[str, STORAGE_TYPES]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Optional[StorageMeta] = None


@dataclass(frozen=True)
class MetadataIndex:
    """One saved item: a value's name and, for a tensor chunk, its offsets. index is a search
    hint only (not compared)."""
    fqn: str
    offset: Optional[Size] = None
    index: Optional[int] = field(hash=False, compare=False, default=None)

    def __init__(self, fqn: str, offset: Optional[Sequence[int]] = None,
                 index: Optional[int] = None):
        object.__setattr__(self, "fqn", fqn)
        object.__setattr__(self, "index", index)
        if offset is not None:
            object.__setattr__(self, "offset", Size(offset))


__all__ = ["ChunkStorageMetadata", "TensorStorageMetadata", "BytesStorageMetadata", "Metadata",
           "MetadataIndex", "TensorProperties", "StorageMeta"]
