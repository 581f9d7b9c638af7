"""The DataLoader (torch.utils.data.dataloader; its collation is in _utils/collate.py).

Over one of ember's C++ datasets (a TensorDataset of (data, target), MNIST, FashionMNIST) with no
sampler and no collate_fn, the DataLoader is the C++ one: batches stacked by worker threads
without the GIL, shuffled with ember's generator. Over anything else (a Dataset subclass written
in Python, an IterableDataset, a sampler such as DistributedSampler, a collate_fn), batches are
made as PyTorch makes them: the batch sampler's indices, dataset[i] for each, then collate_fn
(default_collate), on `num_workers` threads. Workers are threads, not processes: ember's ops
release the GIL while they compute.
"""
import collections.abc
import concurrent.futures
import random
import threading
import warnings

from ... import _C
from ..._C import Tensor, int64
from ._utils import fetch
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset
from .datapipes.datapipe import IterDataPipe
from . import graph_settings
from .sampler import Sampler, SequentialSampler, RandomSampler, BatchSampler

_d = _C._data

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _DatasetKind:
    """A dataset's kind (Map: __getitem__ by index; Iterable: __iter__) and the fetcher that
    reads a batch from it, as torch.utils.data.dataloader._DatasetKind."""
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return fetch._MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return fetch._IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


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


_pin_warned = False


def _can_pin(pin_memory):
    """pin_memory=True without a usable GPU warns once and does not pin, as PyTorch does."""
    global _pin_warned
    if not pin_memory or _C._cuda.is_available():
        return pin_memory
    if not _pin_warned:
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.")
        _pin_warned = True
    return False


class _WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        return "WorkerInfo(" + ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items()
                                         if k != "dataset") + ")"


_worker = threading.local()


def get_worker_info():
    """The worker's id, count, seed and dataset inside a DataLoader worker; None elsewhere."""
    return getattr(_worker, "info", None)


class DataLoader:
    """Batches of a dataset, with torch.utils.data.DataLoader's arguments (and ember's `seed`,
    fixing the shuffle of its C++ loader). Workers are threads."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device="", seed=None):
        if not hasattr(dataset, "__getitem__") and not hasattr(dataset, "__iter__"):
            raise TypeError("DataLoader: expected a dataset (an object with __getitem__ and "
                            f"__len__, or __iter__), got {type(dataset).__name__}")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self._iterable = isinstance(dataset, IterableDataset)
        if isinstance(dataset, IterDataPipe):
            # As PyTorch: shuffle= turns the pipeline's Shufflers on or off.
            dataset = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
            shuffle = None
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "sampler/batch_sampler option")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.dataset, self.num_workers = dataset, num_workers
        self.pin_memory = _can_pin(pin_memory)
        self.prefetch_factor, self.timeout = prefetch_factor, timeout
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self._native = None
        native = dataset if isinstance(dataset, _d.Dataset) else getattr(dataset, "_native", None)
        if (native is not None and sampler is None and batch_sampler is None
                and collate_fn is None and batch_size is not None and worker_init_fn is None
                and generator is None):
            self._native = _d.DataLoader(native, batch_size=batch_size, shuffle=shuffle,
                                         num_workers=num_workers, drop_last=drop_last,
                                         pin_memory=self.pin_memory, seed=seed)
            self.batch_size, self.drop_last, self.sampler, self.batch_sampler = (
                batch_size, drop_last, None, None)
            return
        if self._iterable:
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
                    sampler = RandomSampler(dataset, generator=generator)
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif batch_sampler is None:  # batch_size=None: samples one by one, not collated
            sampler = sampler if sampler is not None else SequentialSampler(dataset)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler

    def __len__(self):
        if self._native is not None:
            return len(self._native)
        if self._iterable:
            n = len(self.dataset)  # a TypeError when the dataset has no length, as PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def _collate(self, samples):
        batch = self.collate_fn(samples)
        return _pin(batch) if self.pin_memory else batch

    def _fetch(self, indices):
        if self.batch_sampler is None:  # automatic batching off
            sample = self.dataset[indices]
            return _pin(sample) if self.pin_memory else sample
        if getattr(self.dataset, "__getitems__", None):  # a batch at a time, as PyTorch
            return self._collate(self.dataset.__getitems__(indices))
        return self._collate([self.dataset[i] for i in indices])

    def __iter__(self):
        if self._native is not None:
            return iter(self._native)
        if self._iterable:
            return self._iterate()
        source = self.batch_sampler if self.batch_sampler is not None else self.sampler
        if self.num_workers == 0:
            return map(self._fetch, source)
        return self._threaded(iter(source))

    def _iterate(self):
        # An iterable dataset is read by this thread (one copy; PyTorch's workers would each read
        # a copy of it unless it splits itself with get_worker_info).
        if isinstance(self.dataset, IterDataPipe):
            # As PyTorch at each epoch: the random DataPipes get seeds from the loader's
            # generator (the default one without).
            rng = _C.Generator()
            rng.manual_seed(int(_C._ops.empty((), dtype=int64).random_(
                generator=self.generator).item()))
            graph_settings.apply_random_seed(self.dataset, rng)
        if self.batch_size is None:
            for sample in self.dataset:
                yield _pin(sample) if self.pin_memory else sample
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self._collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield self._collate(batch)

    def _start_worker(self, ids):
        worker_id = next(ids)
        _worker.info = _WorkerInfo(id=worker_id, num_workers=self.num_workers,
                                   seed=random.getrandbits(32), dataset=self.dataset)
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)

    def _threaded(self, source):
        # Up to num_workers * prefetch_factor batches are made ahead, handed out in order; a
        # worker's exception is raised here, at its batch.
        ahead = max(1, self.num_workers * (self.prefetch_factor or 2))
        ids = iter(range(self.num_workers))
        lock = threading.Lock()

        def init():
            with lock:
                self._start_worker(ids)

        pool = concurrent.futures.ThreadPoolExecutor(self.num_workers,
                                                     thread_name_prefix="ember-loader",
                                                     initializer=init)
        timeout = self.timeout or None
        try:
            pending = collections.deque()
            for indices in source:
                pending.append(pool.submit(self._fetch, indices))
                if len(pending) >= ahead:
                    yield pending.popleft().result(timeout)
            while pending:
                yield pending.popleft().result(timeout)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
