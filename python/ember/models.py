"""ember.models: the models ember ships (LeNet-5 for 28x28 images, an MLP)."""
from . import _C

LeNet, MLP = _C._models.LeNet, _C._models.MLP
