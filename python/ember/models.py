"""ember.models: the models ember ships: LeNet-5 for 28x28 images, an MLP, ResNet-18
(torchvision's module names, so state dicts load in PyTorch and back), and nanoGPT's GPT (its
module names and state-dict keys)."""
from . import _C

LeNet, MLP, ResNet18, GPT = (_C._models.LeNet, _C._models.MLP, _C._models.ResNet18,
                             _C._models.GPT)
resnet18_fashion_mnist = _C._models.resnet18_fashion_mnist


def resnet18(num_classes=1000, in_channels=3):
    """torchvision.models.resnet18's network (ImageNet's stem), untrained."""
    return ResNet18(in_channels, num_classes)
