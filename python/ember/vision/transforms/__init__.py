"""ember.vision.transforms: torchvision.transforms' image transforms, on PIL images and ember
tensors."""
from .transforms import (CenterCrop, Compose, ConvertImageDtype, FiveCrop, Grayscale,  # noqa: F401
                         Lambda, Normalize, Pad, PILToTensor, RandomApply, RandomChoice,
                         RandomCrop, RandomErasing, RandomGrayscale, RandomHorizontalFlip,
                         RandomInvert, RandomOrder, RandomResizedCrop, RandomTransforms,
                         RandomVerticalFlip, Resize, TenCrop, ToPILImage, ToTensor)
from .functional import InterpolationMode  # noqa: F401
from . import functional  # noqa: F401
