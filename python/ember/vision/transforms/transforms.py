"""The image transforms as callables (torchvision.transforms): each takes a PIL image or an ember
tensor (..., C, H, W) and returns the transformed image. The random ones draw from ember's global
generator (ember.rand, ember.randint), so ember.manual_seed makes them repeat.

They are plain callables with torchvision's `forward` and repr, not ember.nn.Modules: a transform
holds no parameters, and DataLoader workers call them from several threads at once.
"""
import math
import numbers
import random
import warnings
from collections.abc import Sequence

from ... import as_tensor, float32, rand, randint, randn, tensor
from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int


def _int_interpolation(interpolation):
    if isinstance(interpolation, int):
        F._warn_int_interpolation()
        interpolation = _interpolation_modes_from_int(interpolation)
    return interpolation


def _uniform(low, high):
    """A float drawn uniformly from [low, high) by ember's generator (torch's uniform_)."""
    return float(low + (high - low) * rand(1).item())


def _coin(p):
    """True with probability p, drawn as torchvision draws it: rand(1) < p."""
    return rand(1).item() < p


def _randint(low, high):
    return int(randint(low, high, (1,)).item())


class _Transform:
    """A transform: calling it calls forward."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Compose:
    """The transforms applied in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        format_string = self.__class__.__name__ + "("
        for t in self.transforms:
            format_string += f"\n    {t}"
        return format_string + "\n)"


class ToTensor:
    """A PIL image or ndarray (H, W, C) as a (C, H, W) tensor, uint8 scaled to float [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """A PIL image as a (C, H, W) tensor of its own type."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(_Transform):
    """A tensor image as dtype, its values rescaled."""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """A tensor or ndarray as a PIL image."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return self.__class__.__name__ + ("(" if self.mode is None else f"(mode={self.mode}") + ")"


class Normalize(_Transform):
    """(x - mean) / std per channel of a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(_Transform):
    """Resizes to size ((h, w), or the smaller edge for an int)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=None):
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _int_interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        detail = (f"(size={self.size}, interpolation={self.interpolation.value}, "
                  f"max_size={self.max_size}, antialias={self.antialias})")
        return f"{self.__class__.__name__}{detail}"


_SIZE_ERROR = "Please provide only two dimensions (h, w) for size."


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


class CenterCrop(_Transform):
    """The centre size ((h, w) or an int) box."""

    def __init__(self, size):
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(_Transform):
    """Pads each border (constant fill, edge, reflect or symmetric)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomTransforms:
    """The base of transforms that apply some of a list of transforms."""

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError()

    def __repr__(self):
        format_string = self.__class__.__name__ + "("
        for t in self.transforms:
            format_string += f"\n    {t}"
        return format_string + "\n)"


class RandomApply(_Transform):
    """All the transforms with probability p, none otherwise."""

    def __init__(self, transforms, p=0.5):
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        format_string = self.__class__.__name__ + "(" + f"\n    p={self.p}"
        for t in self.transforms:
            format_string += f"\n    {t}"
        return format_string + "\n)"


class RandomOrder(RandomTransforms):
    """The transforms in a random order (Python's random, as torchvision)."""

    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """One of the transforms, chosen with weights p (Python's random, as torchvision)."""

    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(_Transform):
    """A size ((h, w) or an int) box at a random place, after optional padding."""

    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a random output_size crop of img."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = _randint(0, h - th + 1)
        j = _randint(0, w - tw + 1)
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = tuple(_setup_size(size, error_msg=_SIZE_ERROR))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(_Transform):
    """Mirrors left to right with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, img):
        if _coin(self.p):
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(_Transform):
    """Flips upside down with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, img):
        if _coin(self.p):
            return F.vflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomResizedCrop(_Transform):
    """A random box (area fraction in scale, aspect ratio in ratio) resized to size."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=None):
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = _int_interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, height, width) of a random crop: ten tries at a random area and aspect
        ratio, then the central crop of the nearest allowed ratio."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = tensor(ratio, dtype=float32).log()  # float32, as torchvision's
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = as_tensor(_uniform(float(log_ratio[0]), float(log_ratio[1])),
                                     dtype=float32).exp().item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = _randint(0, height - h + 1)
                j = _randint(0, width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w = width
            h = height
        i = (height - h) // 2
        j = (width - w) // 2
        return i, j, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def __repr__(self):
        format_string = self.__class__.__name__ + f"(size={self.size}"
        format_string += f", scale={tuple(round(s, 4) for s in self.scale)}"
        format_string += f", ratio={tuple(round(r, 4) for r in self.ratio)}"
        format_string += f", interpolation={self.interpolation.value})"
        format_string += f", antialias={self.antialias})"
        return format_string


class FiveCrop(_Transform):
    """The four corner crops and the centre crop, as a tuple."""

    def __init__(self, size):
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)

    def forward(self, img):
        return F.five_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(_Transform):
    """FiveCrop of the image and of its flipped copy, as a tuple."""

    def __init__(self, size, vertical_flip=False):
        self.size = _setup_size(size, error_msg=_SIZE_ERROR)
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class Grayscale(_Transform):
    """The image in grayscale, on 1 or 3 channels."""

    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(_Transform):
    """The image in grayscale (as many channels as it had) with probability p."""

    def __init__(self, p=0.1):
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if _coin(self.p):
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomInvert(_Transform):
    """The image's colours inverted with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def forward(self, img):
        if _coin(self.p):
            return F.invert(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomErasing(_Transform):
    """A random box of a tensor image erased (to value, or to noise for "random"), with
    probability p."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """(top, left, height, width, value tensor) of the box to erase; the whole image
        unchanged after ten failed tries."""
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = tensor(ratio, dtype=float32).log()
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = as_tensor(_uniform(float(log_ratio[0]), float(log_ratio[1])),
                                     dtype=float32).exp().item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = randn(img_c, h, w, dtype=img.dtype, device=img.device)
            else:
                v = as_tensor(value, dtype=img.dtype, device=img.device)[:, None, None]
            i = _randint(0, img_h - h + 1)
            j = _randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if _coin(self.p):
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, (list, tuple)):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and not (len(value) in (1, img.shape[-3])):
                raise ValueError("If value is a sequence, it should have either a single value or "
                                 f"{img.shape[-3]} (number of input channels)")
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")

