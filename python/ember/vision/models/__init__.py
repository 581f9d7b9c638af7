"""ember.vision.models: torchvision.models' classification builders: AlexNet, VGG, ResNet (and
ResNeXt, Wide ResNet), SqueezeNet."""
from . import _resnet, alexnet, resnet, squeezenet, vgg  # noqa: F401
from ._resnet import *  # noqa: F401,F403
from .alexnet import AlexNet, AlexNet_Weights, alexnet  # noqa: F401,F811
from .resnet import ResNet18_Weights, Weights, WeightsEnum, resnet18  # noqa: F401
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403

# torchvision.models.resnet holds ResNet, BasicBlock, Bottleneck and every ResNet builder
# (programs subclass them: `from torchvision.models.resnet import BasicBlock`); ember's resnet.py
# holds only resnet18, so the Python ones join it here, and their classes pickle under its name.
for _name in _resnet.__all__ + ["conv1x1", "conv3x3"]:
    _obj = getattr(_resnet, _name)
    if isinstance(_obj, type):
        _obj.__module__ = resnet.__name__
    setattr(resnet, _name, _obj)
del _name, _obj

__all__ = (["Weights", "WeightsEnum", "ResNet18_Weights", "resnet18", "AlexNet",
            "AlexNet_Weights", "alexnet"] + _resnet.__all__ + squeezenet.__all__ + vgg.__all__)
