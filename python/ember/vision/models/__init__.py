"""ember.vision.models: torchvision.models' builders that ember has a network for."""
from . import resnet  # noqa: F401
from .resnet import ResNet18_Weights, Weights, WeightsEnum, resnet18  # noqa: F401

__all__ = ["ResNet18_Weights", "Weights", "WeightsEnum", "resnet18"]
