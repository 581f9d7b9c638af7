"""torchvision.models.resnet's ResNet, BasicBlock and Bottleneck in Python over ember.nn, with
torchvision's module names (so state dicts load both ways) and initialisation, and the builders
from ResNet-34 up (ResNeXt and Wide ResNet too). resnet18 stays ember's C++ network (resnet.py);
models/__init__ makes these names reachable as ember.vision.models.resnet.* as well."""
from functools import partial

from ... import flatten, nn
from ._utils import (WeightsEnum, build, handle_legacy_interface, imagenet_weights,
                     ovewrite_named_param)

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "ResNet34_Weights", "ResNet50_Weights",
           "ResNet101_Weights", "ResNet152_Weights", "ResNeXt50_32X4D_Weights",
           "ResNeXt101_32X8D_Weights", "ResNeXt101_64X4D_Weights", "Wide_ResNet50_2_Weights",
           "Wide_ResNet101_2_Weights", "resnet34", "resnet50", "resnet101", "resnet152",
           "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2",
           "wide_resnet101_2"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding, no bias (a batch norm follows)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution, no bias (a batch norm follows)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a shortcut (ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided: ResNet V1.5), 1x1 expand by 4, and a shortcut (ResNet-50 up)."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """ImageNet's stem, four stages of `block` (`layers` blocks each), global pool and fc."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2,
                                       dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2,
                                       dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2,
                                       dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            # Each residual branch starts as zero, so each block starts as the identity.
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = flatten(x, 1)
        return self.fc(x)

    def forward(self, x):
        return self._forward_impl(x)


def _resnet(block, layers, weights_enum, weights, progress, kwargs):
    return build(partial(ResNet, block, layers), weights_enum, weights, progress, kwargs)


_URL = "https://download.pytorch.org/models/"
_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification"
_NEW_RECIPE = "https://github.com/pytorch/vision/issues/3995"
_w = partial(imagenet_weights, min_size=(1, 1))
# The newer weights (V2) were trained at 176 and are evaluated after a resize to 232.
_w2 = partial(_w, resize_size=232)


class ResNet34_Weights(WeightsEnum):
    """ResNet-34's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnet34-b627a593.pth", 21797672, 73.314, 91.420,
                       recipe=_RECIPE + "#resnet")
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    """ResNet-50's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnet50-0676ba61.pth", 25557032, 76.130, 92.862,
                       recipe=_RECIPE + "#resnet")
    IMAGENET1K_V2 = _w2(_URL + "resnet50-11ad3fa6.pth", 25557032, 80.858, 95.434,
                        recipe=_NEW_RECIPE + "#issuecomment-1013906621")
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    """ResNet-101's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnet101-63fe2227.pth", 44549160, 77.374, 93.546,
                       recipe=_RECIPE + "#resnet")
    IMAGENET1K_V2 = _w2(_URL + "resnet101-cd907fc2.pth", 44549160, 81.886, 95.780,
                        recipe=_NEW_RECIPE + "#new-recipe")
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    """ResNet-152's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnet152-394f9c45.pth", 60192808, 78.312, 94.046,
                       recipe=_RECIPE + "#resnet")
    IMAGENET1K_V2 = _w2(_URL + "resnet152-f82ba261.pth", 60192808, 82.284, 96.002,
                        recipe=_NEW_RECIPE + "#new-recipe")
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    """ResNeXt-50 32x4d's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnext50_32x4d-7cdf4587.pth", 25028904, 77.618, 93.698,
                       recipe=_RECIPE + "#resnext")
    IMAGENET1K_V2 = _w2(_URL + "resnext50_32x4d-1a0047aa.pth", 25028904, 81.198, 95.340,
                        recipe=_NEW_RECIPE + "#new-recipe")
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    """ResNeXt-101 32x8d's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "resnext101_32x8d-8ba56ff5.pth", 88791336, 79.312, 94.526,
                       recipe=_RECIPE + "#resnext")
    IMAGENET1K_V2 = _w2(_URL + "resnext101_32x8d-110c445d.pth", 88791336, 82.834, 96.228,
                        recipe=_NEW_RECIPE + "#new-recipe-with-fixres")
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    """ResNeXt-101 64x4d's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w2(_URL + "resnext101_64x4d-173b62eb.pth", 83455272, 83.246, 96.454,
                        recipe="https://github.com/pytorch/vision/pull/5935")
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(WeightsEnum):
    """Wide ResNet-50-2's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "wide_resnet50_2-95faca4d.pth", 68883240, 78.468, 94.086,
                       recipe="https://github.com/pytorch/vision/pull/912#issue-445437439")
    IMAGENET1K_V2 = _w2(_URL + "wide_resnet50_2-9ba9bcbe.pth", 68883240, 81.602, 95.758,
                        recipe=_NEW_RECIPE + "#new-recipe-with-fixres")
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    """Wide ResNet-101-2's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = _w(_URL + "wide_resnet101_2-32ee1156.pth", 126886696, 78.848, 94.284,
                       recipe="https://github.com/pytorch/vision/pull/912#issue-445437439")
    IMAGENET1K_V2 = _w2(_URL + "wide_resnet101_2-d733dc28.pth", 126886696, 82.510, 96.020,
                        recipe=_NEW_RECIPE + "#new-recipe")
    DEFAULT = IMAGENET1K_V2


@handle_legacy_interface(ResNet34_Weights.IMAGENET1K_V1)
def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34; `weights` a ResNet34_Weights member found locally or a safetensors path."""
    return _resnet(BasicBlock, [3, 4, 6, 3], ResNet34_Weights, weights, progress, kwargs)


@handle_legacy_interface(ResNet50_Weights.IMAGENET1K_V1)
def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50 (V1.5); `weights` a ResNet50_Weights member found locally or a safetensors path."""
    return _resnet(Bottleneck, [3, 4, 6, 3], ResNet50_Weights, weights, progress, kwargs)


@handle_legacy_interface(ResNet101_Weights.IMAGENET1K_V1)
def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101 (V1.5); `weights` a ResNet101_Weights member or a safetensors path."""
    return _resnet(Bottleneck, [3, 4, 23, 3], ResNet101_Weights, weights, progress, kwargs)


@handle_legacy_interface(ResNet152_Weights.IMAGENET1K_V1)
def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152 (V1.5); `weights` a ResNet152_Weights member or a safetensors path."""
    return _resnet(Bottleneck, [3, 8, 36, 3], ResNet152_Weights, weights, progress, kwargs)


@handle_legacy_interface(ResNeXt50_32X4D_Weights.IMAGENET1K_V1)
def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d; `weights` a ResNeXt50_32X4D_Weights member or a safetensors path."""
    ovewrite_named_param(kwargs, "groups", 32)
    ovewrite_named_param(kwargs, "width_per_group", 4)
    return _resnet(Bottleneck, [3, 4, 6, 3], ResNeXt50_32X4D_Weights, weights, progress, kwargs)


@handle_legacy_interface(ResNeXt101_32X8D_Weights.IMAGENET1K_V1)
def resnext101_32x8d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 32x8d; `weights` a ResNeXt101_32X8D_Weights member or a safetensors path."""
    ovewrite_named_param(kwargs, "groups", 32)
    ovewrite_named_param(kwargs, "width_per_group", 8)
    return _resnet(Bottleneck, [3, 4, 23, 3], ResNeXt101_32X8D_Weights, weights, progress,
                   kwargs)


@handle_legacy_interface(ResNeXt101_64X4D_Weights.IMAGENET1K_V1)
def resnext101_64x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 64x4d; `weights` a ResNeXt101_64X4D_Weights member or a safetensors path."""
    ovewrite_named_param(kwargs, "groups", 64)
    ovewrite_named_param(kwargs, "width_per_group", 4)
    return _resnet(Bottleneck, [3, 4, 23, 3], ResNeXt101_64X4D_Weights, weights, progress,
                   kwargs)


@handle_legacy_interface(Wide_ResNet50_2_Weights.IMAGENET1K_V1)
def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2; `weights` a Wide_ResNet50_2_Weights member or a safetensors path."""
    ovewrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 6, 3], Wide_ResNet50_2_Weights, weights, progress, kwargs)


@handle_legacy_interface(Wide_ResNet101_2_Weights.IMAGENET1K_V1)
def wide_resnet101_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-101-2; `weights` a Wide_ResNet101_2_Weights member or a safetensors path."""
    ovewrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 23, 3], Wide_ResNet101_2_Weights, weights, progress,
                   kwargs)
