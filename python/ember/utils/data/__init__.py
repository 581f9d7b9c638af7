"""ember.utils.data: datasets, samplers and the DataLoader (torch.utils.data's names).

Over one of ember's C++ datasets (TensorDataset, MNIST, FashionMNIST) with no sampler and no
collate_fn, the DataLoader is the C++ one: (data, target) batches stacked by worker threads without
the GIL, shuffled with ember's generator. Over anything else (a Dataset subclass written in Python,
a sampler such as DistributedSampler, a collate_fn), batches are made as PyTorch makes them: the
batch sampler's indices, dataset[i] for each, then collate_fn (default_collate: stacks tensors,
NumPy arrays and numbers, recursing into tuples, lists and dicts), on `num_workers` threads.

DataPipes (IterDataPipe, MapDataPipe, datapipes.iter and datapipes.map) chain datasets
functionally: IterableWrapper(range(10)).map(f).filter(p).batch(4).
"""
from ... import _C
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                      ChainDataset, Subset, random_split)
from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info
from .distributed import DistributedSampler
from . import _utils, datapipes, graph, graph_settings  # noqa: F401
from .datapipes.datapipe import DFIterDataPipe, DataChunk, IterDataPipe, MapDataPipe
from .datapipes._decorator import (argument_validation, functional_datapipe,
                                   guaranteed_datapipes_determinism, non_deterministic,
                                   runtime_validation, runtime_validation_disabled)
from ..._missing import missing

_d = _C._data
read_idx = _d.read_idx
FASHION_MNIST_DIR = _d.FASHION_MNIST_DIR


def MNIST(root, train=True, mean=0.1307, std=0.3081):
    """MNIST from the IDX files in root, normalised with MNIST's statistics."""
    return _d.MNIST(root, train=train, mean=mean, std=std)


def FashionMNIST(root=FASHION_MNIST_DIR, train=True, mean=0.2860, std=0.3530):
    """Fashion-MNIST (Debian's dataset-fashion-mnist by default), normalised with its statistics:
    images (1, 28, 28) float32, labels int64."""
    return _d.MNIST(root, train=train, mean=mean, std=std)


__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "MNIST", "FashionMNIST", "DataLoader", "default_collate",
           "default_convert", "get_worker_info", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
           "random_split", "read_idx", "FASHION_MNIST_DIR", "_DatasetKind", "DFIterDataPipe",
           "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
           "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "runtime_validation", "runtime_validation_disabled"]
__getattr__ = missing(__name__)
