"""AlexNet, "one weird trick" variant (torchvision.models.alexnet): torchvision's module names, so
state dicts load both ways."""
from ... import flatten, nn
from ._utils import WeightsEnum, build, handle_legacy_interface, imagenet_weights

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """Five convolutions and three linear layers; PyTorch's default initialisation."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = flatten(x, 1)
        return self.classifier(x)


class AlexNet_Weights(WeightsEnum):
    """AlexNet's ImageNet weights (from a local file: no network here)."""
    IMAGENET1K_V1 = imagenet_weights(
        "https://download.pytorch.org/models/alexnet-owt-7be5be79.pth", 61100840, 56.522, 79.066,
        min_size=(63, 63),
        recipe="https://github.com/pytorch/vision/tree/main/references/classification"
               "#alexnet-and-vgg")
    DEFAULT = IMAGENET1K_V1


@handle_legacy_interface(AlexNet_Weights.IMAGENET1K_V1)
def alexnet(*, weights=None, progress=True, **kwargs):
    """AlexNet; `weights` an AlexNet_Weights member found locally or a safetensors path."""
    return build(AlexNet, AlexNet_Weights, weights, progress, kwargs)
