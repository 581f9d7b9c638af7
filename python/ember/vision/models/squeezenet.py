"""SqueezeNet 1.0 and 1.1 (torchvision.models.squeezenet): torchvision's module names, so state
dicts load both ways, and its initialisation."""
from functools import partial

from ... import cat, flatten, nn
from ._utils import WeightsEnum, build, handle_legacy_interface, imagenet_weights

__all__ = ["SqueezeNet", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "squeezenet1_0",
           "squeezenet1_1"]


class Fire(nn.Module):
    """A 1x1 squeeze, then 1x1 and 3x3 expansions concatenated along channels."""

    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return cat([self.expand1x1_activation(self.expand1x1(x)),
                    self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    """SqueezeNet `version` "1_0" or "1_1": Fire modules, then a 1x1 convolution classifier."""

    def __init__(self, version="1_0", num_classes=1000, dropout=0.5):
        super().__init__()
        self.num_classes = num_classes
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(512, 64, 256, 256))
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                Fire(512, 64, 256, 256))
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                # The classifier starts small: its outputs are the logits.
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.classifier(x)
        return flatten(x, 1)


def _squeezenet(version, weights_enum, weights, progress, kwargs):
    return build(partial(SqueezeNet, version), weights_enum, weights, progress, kwargs)


_RECIPE = "https://github.com/pytorch/vision/pull/49#issuecomment-277560717"
_URL = "https://download.pytorch.org/models/"


class SqueezeNet1_0_Weights(WeightsEnum):
    """SqueezeNet 1.0's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = imagenet_weights(_URL + "squeezenet1_0-b66bff10.pth", 1248424, 58.092, 80.420,
                                     min_size=(21, 21), recipe=_RECIPE)
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_1_Weights(WeightsEnum):
    """SqueezeNet 1.1's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = imagenet_weights(_URL + "squeezenet1_1-b8a52dc0.pth", 1235496, 58.178, 80.624,
                                     min_size=(17, 17), recipe=_RECIPE)
    DEFAULT = IMAGENET1K_V1


@handle_legacy_interface(SqueezeNet1_0_Weights.IMAGENET1K_V1)
def squeezenet1_0(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.0; `weights` a SqueezeNet1_0_Weights member or a safetensors path."""
    return _squeezenet("1_0", SqueezeNet1_0_Weights, weights, progress, kwargs)


@handle_legacy_interface(SqueezeNet1_1_Weights.IMAGENET1K_V1)
def squeezenet1_1(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.1 (2.4x cheaper than 1.0); `weights` a SqueezeNet1_1_Weights or a path."""
    return _squeezenet("1_1", SqueezeNet1_1_Weights, weights, progress, kwargs)
