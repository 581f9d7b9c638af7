"""ember.vision.datasets: torchvision.datasets' image datasets read from their on-disk formats."""
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST, KMNIST
from .vision import VisionDataset

__all__ = ("MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "DatasetFolder",
           "FakeData", "ImageFolder", "VisionDataset")
