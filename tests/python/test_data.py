"""ember.utils.data from Python: the C++ DataLoader over ember's datasets, Dataset subclasses
written in Python with default_collate or a collate_fn, samplers (DistributedSampler's shards
against PyTorch's), shuffling under ember.manual_seed, Fashion-MNIST from Debian."""
import collections
import os

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
from ember.utils.data import (DataLoader, Dataset, TensorDataset, FashionMNIST, FASHION_MNIST_DIR,
                              default_collate, DistributedSampler, BatchSampler, SequentialSampler,
                              RandomSampler, Subset, random_split)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.full((2,), float(i)), i * i


def test_tensor_dataset_batches_in_order():
    data, targets = ember.arange(10.0).reshape(10, 1), ember.arange(10)
    loader = DataLoader(TensorDataset(data, targets), batch_size=4)
    batches = [(x.shape[0], y.tolist()) for x, y in loader]
    assert batches == [(4, [0, 1, 2, 3]), (4, [4, 5, 6, 7]), (2, [8, 9])] and len(loader) == 3
    assert len(DataLoader(TensorDataset(data, targets), batch_size=4, drop_last=True)) == 2


def test_python_dataset_with_workers():
    loader = DataLoader(Squares(9), batch_size=3, num_workers=2)
    seen = []
    for x, y in loader:
        assert x.shape == (3, 2) and y.dtype is ember.int64
        seen += y.tolist()
    assert seen == [i * i for i in range(9)]
    ds = Squares(3)
    assert len(ds) == 3 and ds[2][1] == 4


def test_shuffle_follows_manual_seed():
    ds = TensorDataset(ember.arange(20.0).reshape(20, 1), ember.arange(20))

    def order():
        return [i for _, y in DataLoader(ds, batch_size=5, shuffle=True) for i in y.tolist()]

    ember.manual_seed(3)
    first = order()
    ember.manual_seed(3)
    assert order() == first and sorted(first) == list(range(20)) and first != list(range(20))


Point = collections.namedtuple("Point", "x y")


def sample(lib, i):
    """One sample of nested fields, made with `lib` (ember or torch) from the same numbers."""
    return {"image": lib.full((2, 3), float(i)), "label": i, "weight": 0.5 * i, "keep": i % 2 == 0,
            "name": f"s{i}", "pair": (np.full(2, i, dtype=np.float32), Point(i, [i, -i]))}


def test_default_collate_matches_pytorch():
    ours = default_collate([sample(ember, i) for i in range(3)])
    theirs = tud.default_collate([sample(torch, i) for i in range(3)])

    def compare(a, b):
        if isinstance(b, torch.Tensor):
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        elif isinstance(b, dict):
            assert list(a) == list(b)
            for k in b:
                compare(a[k], b[k])
        elif isinstance(b, (tuple, list)) and not isinstance(b[0], str):
            assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
            for x, y in zip(a, b):
                compare(x, y)
        else:
            assert a == b

    compare(ours, theirs)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def test_python_datasets_of_any_structure_and_collate_fn():
    class Triples(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return ember.full((2,), float(i)), i, {"sq": i * i}

    batches = list(DataLoader(Triples(), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[1][2]["sq"].tolist() == [4, 9] and batches[0][0].shape == (2, 2)
    sizes = [len(b) for b in DataLoader(Triples(), batch_size=2, collate_fn=lambda items: items)]
    assert sizes == [2, 2, 1]
    data = TensorDataset(ember.arange(6.0).reshape(6, 1), ember.arange(6))
    loader = DataLoader(data, batch_size=3, collate_fn=lambda items: sum(int(y) for _, y in items))
    assert list(loader) == [3, 12], "a collate_fn over one of ember's datasets"
    assert [x for x in DataLoader(Triples(), batch_size=None)][3][1] == 3, "batch_size=None"


def test_worker_threads_keep_order_and_report_errors():
    class Slow(Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            if i == 33:
                raise KeyError("sample 33 is missing")
            return ember.full((1,), float(i)).exp().log(), i

    loader = iter(DataLoader(Slow(), batch_size=4, num_workers=3))
    seen = [i for _ in range(8) for i in next(loader)[1].tolist()]
    assert seen == list(range(32))
    with pytest.raises(KeyError, match="sample 33 is missing"):
        next(loader)


def test_samplers_match_pytorch():
    data = list(range(10))
    for drop_last in (False, True):
        ours = list(BatchSampler(SequentialSampler(data), 3, drop_last))
        assert ours == list(tud.BatchSampler(tud.SequentialSampler(data), 3, drop_last))
        assert len(BatchSampler(SequentialSampler(data), 3, drop_last)) == len(ours)
    ember.manual_seed(1)
    first = list(RandomSampler(data))
    ember.manual_seed(1)
    assert list(RandomSampler(data)) == first and sorted(first) == data
    assert len(list(RandomSampler(data, replacement=True, num_samples=25))) == 25
    for n, replicas in ((10, 3), (11, 4), (8, 2)):
        for drop_last in (False, True):
            ds = list(range(n))
            shards = [list(DistributedSampler(ds, replicas, r, shuffle=False, drop_last=drop_last))
                      for r in range(replicas)]
            want = [list(tud.DistributedSampler(ds, replicas, r, shuffle=False,
                                                drop_last=drop_last)) for r in range(replicas)]
            assert shards == want, (n, replicas, drop_last)
    s0, s1 = DistributedSampler(data, 2, 0, seed=5), DistributedSampler(data, 2, 1, seed=5)
    epoch0 = list(s0) + list(s1)
    assert sorted(epoch0) == data and list(s0) != list(range(0, 10, 2))
    s0.set_epoch(1)
    assert list(s0) != epoch0[:5], "set_epoch reshuffles"
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(data, 2, 2)
    with pytest.raises(RuntimeError, match="process group has not been initialized"):
        DistributedSampler(data)


def test_a_loader_over_a_distributed_sampler_shards_the_data():
    data = TensorDataset(ember.arange(10.0).reshape(10, 1), ember.arange(10))
    seen = []
    for rank in range(2):
        loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, rank))
        assert len(loader) == 3
        seen += [i for _, y in loader for i in y.tolist()]
    assert sorted(seen) == list(range(10))
    parts = random_split(Subset(data, range(8)), [0.75, 0.25])
    assert [len(p) for p in parts] == [6, 2]
    assert sorted(int(y) for p in parts for _, y in p) == list(range(8))


def test_bad_datasets_are_clear_errors():
    with pytest.raises(TypeError, match="__getitem__ and __len__"):
        DataLoader(42)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Squares(2), batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(Squares(2), sampler=SequentialSampler(range(2)), shuffle=True)


@pytest.mark.skipif(not os.path.exists(os.path.join(FASHION_MNIST_DIR, "t10k-labels-idx1-ubyte.gz")),
                    reason="needs Debian's dataset-fashion-mnist")
def test_fashion_mnist():
    test = FashionMNIST(train=False)
    assert len(test) == 10000
    x, y = test[0]
    assert x.shape == (1, 28, 28) and x.dtype is ember.float32 and 0 <= y.item() < 10
    assert test.targets.shape == (10000,) and test.data.shape == (10000, 28, 28)
    counts = ember.stack([(test.targets == c).sum() for c in range(10)]).tolist()
    assert counts == [1000] * 10
    with pytest.raises(IndexError):
        test[10000]
