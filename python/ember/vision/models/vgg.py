"""VGG-11/13/16/19, with and without batch norm (torchvision.models.vgg): torchvision's module
names, so state dicts load both ways, and its initialisation."""
from functools import partial

from ... import flatten, nn
from ..transforms._presets import ImageClassification
from ._utils import Weights, WeightsEnum, build, handle_legacy_interface, imagenet_weights

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "vgg11",
           "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


class VGG(nn.Module):
    """VGG's classifier over a `features` stack (make_layers): features, avgpool, classifier."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = flatten(x, 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm=False):
    """The convolutions of a cfgs entry: ints are 3x3 convolutions' widths, "M" a 2x2 max pool."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512,
          512, 512, "M"],
}


def _vgg(cfg, batch_norm, weights_enum, weights, progress, kwargs):
    def make(**kw):
        return VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kw)
    # The loaded state dict overwrites every parameter: no need to initialise them.
    return build(make, weights_enum, weights, progress, kwargs, {"init_weights": False})


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg"
_w = partial(imagenet_weights, min_size=(32, 32), recipe=_RECIPE)
_URL = "https://download.pytorch.org/models/"


class VGG11_Weights(WeightsEnum):
    """VGG-11's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg11-8a719046.pth", 132863336, 69.020, 88.628)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    """VGG-11-BN's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg11_bn-6002323d.pth", 132868840, 70.370, 89.810)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    """VGG-13's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg13-19584684.pth", 133047848, 69.928, 89.246)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    """VGG-13-BN's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg13_bn-abd245e5.pth", 133053736, 71.586, 90.374)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    """VGG-16's ImageNet weights, and SSD's feature extractor (from a local file: no network)."""
    IMAGENET1K_V1 = _w(_URL + "vgg16-397923af.pth", 138357544, 71.592, 90.382)
    # Ported from amdegroot/ssd.pytorch: only `features` holds trained values, on 0..255 inputs.
    IMAGENET1K_FEATURES = Weights(
        url=_URL + "vgg16_features-amdegroot-88682ab5.pth",
        transforms=partial(ImageClassification, crop_size=224, mean=(0.48235, 0.45882, 0.40784),
                           std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0)),
        meta={"num_params": 138357544, "min_size": (32, 32), "num_classes": None,
              "recipe": "https://github.com/amdegroot/ssd.pytorch#training-ssd",
              "_metrics": {"ImageNet-1K": {"acc@1": float("nan"), "acc@5": float("nan")}}})
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    """VGG-16-BN's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg16_bn-6c64b313.pth", 138365992, 73.360, 91.516)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    """VGG-19's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg19-dcbb9e9d.pth", 143667240, 72.376, 90.876)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    """VGG-19-BN's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "vgg19_bn-c79401a0.pth", 143678248, 74.218, 91.842)
    DEFAULT = IMAGENET1K_V1


@handle_legacy_interface(VGG11_Weights.IMAGENET1K_V1)
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (config "A"); `weights` a VGG11_Weights member found locally or a safetensors path."""
    return _vgg("A", False, VGG11_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG11_BN_Weights.IMAGENET1K_V1)
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch norm; `weights` a VGG11_BN_Weights member or a safetensors path."""
    return _vgg("A", True, VGG11_BN_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG13_Weights.IMAGENET1K_V1)
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (config "B"); `weights` a VGG13_Weights member found locally or a safetensors path."""
    return _vgg("B", False, VGG13_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG13_BN_Weights.IMAGENET1K_V1)
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch norm; `weights` a VGG13_BN_Weights member or a safetensors path."""
    return _vgg("B", True, VGG13_BN_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG16_Weights.IMAGENET1K_V1)
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (config "D"); `weights` a VGG16_Weights member found locally or a safetensors path."""
    return _vgg("D", False, VGG16_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG16_BN_Weights.IMAGENET1K_V1)
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch norm; `weights` a VGG16_BN_Weights member or a safetensors path."""
    return _vgg("D", True, VGG16_BN_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG19_Weights.IMAGENET1K_V1)
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (config "E"); `weights` a VGG19_Weights member found locally or a safetensors path."""
    return _vgg("E", False, VGG19_Weights, weights, progress, kwargs)


@handle_legacy_interface(VGG19_BN_Weights.IMAGENET1K_V1)
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch norm; `weights` a VGG19_BN_Weights member or a safetensors path."""
    return _vgg("E", True, VGG19_BN_Weights, weights, progress, kwargs)
