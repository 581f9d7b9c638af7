"""torch.utils.data.datapipes.map: the built-in MapDataPipes under PyTorch's short names (each
also a method of every MapDataPipe: Mapper is .map, Batcher .batch, ...; .shuffle gives an
IterDataPipe)."""
from .callable import MapperMapDataPipe as Mapper
from .combinatorics import ShufflerIterDataPipe as Shuffler
from .combining import ConcaterMapDataPipe as Concater, ZipperMapDataPipe as Zipper
from .grouping import BatcherMapDataPipe as Batcher
from .utils import SequenceWrapperMapDataPipe as SequenceWrapper

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]
