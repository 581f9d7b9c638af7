"""ember.utils.data from Python: the C++ DataLoader over ember's datasets and over Dataset
subclasses written in Python, shuffling under ember.manual_seed, Fashion-MNIST from Debian."""
import os

import pytest

import ember
from ember.utils.data import DataLoader, Dataset, TensorDataset, FashionMNIST, FASHION_MNIST_DIR


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


def test_bad_datasets_are_clear_errors():
    class Bad(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return 3  # not a pair

    with pytest.raises(TypeError, match="must be a \\(data, target\\) pair"):
        list(DataLoader(Bad(), batch_size=2))
    with pytest.raises(TypeError, match="__len__ and __getitem__"):
        DataLoader(42)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Squares(2), batch_size=0)


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
