"""ember.utils.data: datasets and the DataLoader (torch.utils.data's names).

A Dataset subclass in Python needs __len__ and __getitem__ returning (data, target); the C++
DataLoader batches it (stacking each part) on worker threads, shuffled with ember's generator.
"""
from .. import _C

_d = _C._data
DataLoader = _d.DataLoader
TensorDataset = _d.TensorDataset
read_idx = _d.read_idx
FASHION_MNIST_DIR = _d.FASHION_MNIST_DIR


class Dataset:
    """The base of map-style datasets: define __len__ and __getitem__(i) -> (data, target)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


def MNIST(root, train=True, mean=0.1307, std=0.3081):
    """MNIST from the IDX files in root, normalised with MNIST's statistics."""
    return _d.MNIST(root, train=train, mean=mean, std=std)


def FashionMNIST(root=FASHION_MNIST_DIR, train=True, mean=0.2860, std=0.3530):
    """Fashion-MNIST (Debian's dataset-fashion-mnist by default), normalised with its statistics:
    images (1, 28, 28) float32, labels int64."""
    return _d.MNIST(root, train=train, mean=mean, std=std)
