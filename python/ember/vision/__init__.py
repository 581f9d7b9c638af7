"""ember.vision: torchvision 0.14's basics over ember, in Python: datasets read from their on-disk
formats (MNIST, Fashion-MNIST, CIFAR, image folders), transforms on PIL images and ember tensors,
make_grid / save_image, image files (io), and classification models (AlexNet, VGG, ResNet,
SqueezeNet). Under `python -m ember.run`, `import torchvision` gives this package.
"""
from . import datasets, io, models, transforms, utils  # noqa: F401

__version__ = "0.14.1"  # the torchvision release whose API this follows

_image_backend = "PIL"


def set_image_backend(backend):
    """Sets the image loader of the datasets: "PIL" or "accimage"."""
    global _image_backend
    if backend not in ["PIL", "accimage"]:
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    _image_backend = backend


def get_image_backend():
    """The image loader of the datasets: "PIL" or "accimage"."""
    return _image_backend
