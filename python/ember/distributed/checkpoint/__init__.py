"""torch.distributed.checkpoint (DCP): sharded checkpoints in PyTorch's directory format, saved at
N ranks and loaded at M (state_dict_saver.py, state_dict_loader.py, filesystem.py), the state
dict helpers for plain, DDP and FSDP models (state_dict.py), and conversions to one file
(format_utils.py)."""
from . import state_dict  # noqa: F401
from .api import CheckpointException
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import async_save, save, save_state_dict
from .stateful import Stateful

__all__ = ["save", "load", "async_save", "save_state_dict", "load_state_dict",
           "FileSystemReader", "FileSystemWriter", "DefaultSavePlanner", "DefaultLoadPlanner",
           "CheckpointException", "Stateful", "Metadata", "MetadataIndex", "TensorProperties",
           "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata"]
