"""torch.utils.data.datapipes.iter: the built-in IterDataPipes under PyTorch's short names
(each also a method of every IterDataPipe: Mapper is .map, Filter .filter, ...). PyTorch's
file DataPipes (FileLister, FileOpener, StreamReader, RoutedDecoder) are not here yet."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .combining import (ConcaterIterDataPipe as Concater,
                        DemultiplexerIterDataPipe as Demultiplexer,
                        ForkerIterDataPipe as Forker, MultiplexerIterDataPipe as Multiplexer,
                        ZipperIterDataPipe as Zipper)
from .grouping import (BatcherIterDataPipe as Batcher, GrouperIterDataPipe as Grouper,
                       ShardingFilterIterDataPipe as ShardingFilter,
                       UnBatcherIterDataPipe as UnBatcher)
from .selecting import FilterIterDataPipe as Filter
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "Filter", "Forker", "Grouper",
           "IterableWrapper", "Mapper", "Multiplexer", "Sampler", "ShardingFilter", "Shuffler",
           "UnBatcher", "Zipper"]
