"""ember.utils.data: datasets, samplers and the DataLoader (torch.utils.data's names).

Over one of ember's C++ datasets (TensorDataset, MNIST, FashionMNIST) with no sampler and no
collate_fn, the DataLoader is the C++ one: (data, target) batches stacked by worker threads without
the GIL, shuffled with ember's generator. Over anything else (a Dataset subclass written in Python,
a sampler such as DistributedSampler, a collate_fn), batches are made as PyTorch makes them: the
batch sampler's indices, dataset[i] for each, then collate_fn (default_collate: stacks tensors,
NumPy arrays and numbers, recursing into tuples, lists and dicts), on `num_workers` threads.
"""
import collections.abc
import concurrent.futures
import random

from ... import _C
from ..._C import Tensor, float64, from_numpy, stack, tensor
from ._sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                       BatchSampler)
from .distributed import DistributedSampler

_d = _C._data
TensorDataset = _d.TensorDataset
read_idx = _d.read_idx
FASHION_MNIST_DIR = _d.FASHION_MNIST_DIR


class Dataset:
    """The base of map-style datasets: define __len__ and __getitem__(i)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def MNIST(root, train=True, mean=0.1307, std=0.3081):
    """MNIST from the IDX files in root, normalised with MNIST's statistics."""
    return _d.MNIST(root, train=train, mean=mean, std=std)


def FashionMNIST(root=FASHION_MNIST_DIR, train=True, mean=0.2860, std=0.3530):
    """Fashion-MNIST (Debian's dataset-fashion-mnist by default), normalised with its statistics:
    images (1, 28, 28) float32, labels int64."""
    return _d.MNIST(root, train=train, mean=mean, std=std)


def default_collate(batch):
    """A list of samples -> one batch, as torch.utils.data.default_collate: tensors are stacked
    (NumPy arrays become tensors first), numbers become a 1-D tensor (float64 for floats, as in
    PyTorch), strings stay a list, and tuples, lists and dicts are collated field by field (a
    tuple's fields come back as a list, a namedtuple's as the namedtuple, as in PyTorch)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if type(first).__module__ == "numpy" and hasattr(first, "shape"):
        if first.shape == ():  # a NumPy scalar
            return tensor([x.item() for x in batch])
        return stack([from_numpy(x) for x in batch])
    if isinstance(first, bool):
        return tensor(batch)
    if isinstance(first, float):
        return tensor(batch, dtype=float64)
    if isinstance(first, int):
        return tensor(batch)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if len(set(map(len, batch))) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]  # tuples too, as PyTorch
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                    f"lists; found {type(first)}")


def _pin(batch):
    if isinstance(batch, Tensor):
        return batch.pin_memory()
    if isinstance(batch, dict):
        return {k: _pin(v) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_pin(v) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_pin(v) for v in batch)
    return batch


class _SeededSampler(Sampler):
    """shuffle=True with a seed: each pass's order is fixed by seed + epoch, the C++ loader's rule
    (not its exact order: that one comes from ember's Philox, this one from Python's random)."""

    def __init__(self, n, seed):
        self.n, self.seed, self.epoch = n, seed, 0

    def __iter__(self):
        order = list(range(self.n))
        random.Random(self.seed + self.epoch).shuffle(order)
        self.epoch += 1
        return iter(order)

    def __len__(self):
        return self.n


class DataLoader:
    """Batches of a dataset: torch.utils.data.DataLoader's arguments, with `seed` (ember's) fixing
    the shuffle. Workers are threads: ember's ops release the GIL while they compute."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 prefetch_factor=2, seed=None):
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError("DataLoader: expected a dataset (an object with __len__ and "
                            f"__getitem__), got {type(dataset).__name__}")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        self.dataset, self.num_workers, self.pin_memory = dataset, num_workers, pin_memory
        self.prefetch_factor = prefetch_factor
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self._native = None
        if (isinstance(dataset, _d.Dataset) and sampler is None and batch_sampler is None
                and collate_fn is None and batch_size is not None):
            self._native = _d.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                                         num_workers=num_workers, drop_last=drop_last,
                                         pin_memory=pin_memory, seed=seed)
            self.batch_size, self.drop_last, self.sampler, self.batch_sampler = (
                batch_size, drop_last, None, None)
            return
        if batch_sampler is None and batch_size is not None:
            if sampler is None:
                if not shuffle:
                    sampler = SequentialSampler(dataset)
                elif seed is not None:
                    sampler = _SeededSampler(len(dataset), seed)
                else:
                    sampler = RandomSampler(dataset)
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif batch_sampler is None:  # batch_size=None: samples one by one, not collated
            sampler = sampler if sampler is not None else SequentialSampler(dataset)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler

    def __len__(self):
        if self._native is not None:
            return len(self._native)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def _fetch(self, indices):
        if self.batch_sampler is None:  # automatic batching off
            return self.dataset[indices]
        batch = self.collate_fn([self.dataset[i] for i in indices])
        return _pin(batch) if self.pin_memory else batch

    def __iter__(self):
        if self._native is not None:
            return iter(self._native)
        source = self.batch_sampler if self.batch_sampler is not None else self.sampler
        if self.num_workers == 0:
            return map(self._fetch, source)
        return self._threaded(iter(source))

    def _threaded(self, source):
        # Up to num_workers * prefetch_factor batches are made ahead, handed out in order; a
        # worker's exception is raised here, at its batch.
        ahead = max(1, self.num_workers * self.prefetch_factor)
        pool = concurrent.futures.ThreadPoolExecutor(self.num_workers,
                                                     thread_name_prefix="ember-loader")
        try:
            pending = collections.deque()
            for indices in source:
                pending.append(pool.submit(self._fetch, indices))
                if len(pending) >= ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping Subsets of the given lengths (or fractions summing
    to 1), in a random order drawn from ember's generator."""
    from ... import randperm
    n = len(dataset)
    if all(0 <= x <= 1 for x in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        sizes = [int(x * n) for x in lengths]
        for i in range(n - sum(sizes)):  # the remainder, one each, round-robin
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if generator is not None:
        raise ValueError("random_split: ember draws from its default generator (ember.manual_seed);"
                         " generator= is not supported")
    order = randperm(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


__all__ = ["Dataset", "Subset", "TensorDataset", "MNIST", "FashionMNIST", "DataLoader",
           "default_collate", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "DistributedSampler", "random_split", "read_idx",
           "FASHION_MNIST_DIR"]
