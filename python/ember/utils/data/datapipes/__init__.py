"""torch.utils.data.datapipes: composable datasets. datapipe holds IterDataPipe, MapDataPipe
and DataChunk, _decorator functional_datapipe and the determinism and validation decorators;
iter and map the built-in DataPipes (Mapper, Filter, Batcher, Shuffler, ...), which register
themselves as methods (.map, .filter, .batch, .shuffle, ...) as they are imported."""
from . import iter, map  # noqa: F401 (importing them registers their functional names)
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe  # noqa: F401
