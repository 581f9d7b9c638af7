"""The image transforms as functions, on PIL images and on ember tensors (..., C, H, W)
(torchvision.transforms.functional)."""
import numbers
import warnings
from enum import Enum

import numpy as np
from PIL import Image

from ... import Tensor, float32, from_numpy
from . import functional_pil as F_pil, functional_tensor as F_t


class InterpolationMode(Enum):
    """How resampling reads between pixels: nearest, bilinear, bicubic, and PIL's box, hamming and
    lanczos."""
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    # PIL only
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i):
    inverse_modes_mapping = {
        0: InterpolationMode.NEAREST,
        2: InterpolationMode.BILINEAR,
        3: InterpolationMode.BICUBIC,
        4: InterpolationMode.BOX,
        5: InterpolationMode.HAMMING,
        1: InterpolationMode.LANCZOS,
    }
    return inverse_modes_mapping[i]


pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3,
    InterpolationMode.BOX: 4,
    InterpolationMode.HAMMING: 5,
    InterpolationMode.LANCZOS: 1,
}

_is_pil_image = F_pil._is_pil_image


def _warn_int_interpolation():
    warnings.warn("Argument 'interpolation' of type int is deprecated since 0.13 and will be "
                  "removed in 0.15. Please use InterpolationMode enum.")


def get_dimensions(img):
    """[channels, height, width] of a PIL image or a tensor."""
    if isinstance(img, Tensor):
        return F_t.get_dimensions(img)
    return F_pil.get_dimensions(img)


def get_image_size(img):
    """[width, height] of a PIL image or a tensor."""
    if isinstance(img, Tensor):
        return F_t.get_image_size(img)
    return F_pil.get_image_size(img)


def get_image_num_channels(img):
    """The number of channels of a PIL image or a tensor."""
    if isinstance(img, Tensor):
        return F_t.get_image_num_channels(img)
    return F_pil.get_image_num_channels(img)


def _is_numpy(img):
    return isinstance(img, np.ndarray)


def _is_numpy_image(img):
    return img.ndim in {2, 3}


def to_tensor(pic):
    """A PIL image or an (H, W[, C]) ndarray as a (C, H, W) tensor: uint8 scaled to float32 in
    [0, 1], other types kept."""
    if not (_is_pil_image(pic) or _is_numpy(pic)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if _is_numpy(pic) and not _is_numpy_image(pic):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if isinstance(pic, np.ndarray):
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = np.ascontiguousarray(pic.transpose((2, 0, 1)))
    else:
        mode_to_nptype = {"I": np.int32, "I;16": np.int16, "F": np.float32}
        img = np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True)
        if pic.mode == "1":
            img = 255 * img
        if img.dtype == np.int16:
            img = img.astype(np.int32)  # ember has no int16
        img = img.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
        img = np.ascontiguousarray(img.transpose((2, 0, 1)))
    if img.dtype == np.uint8:
        # float32 / float32, as PyTorch divides: bit for bit torchvision's values.
        return from_numpy(img.astype(np.float32) / np.float32(255))
    return from_numpy(img)


def pil_to_tensor(pic):
    """A PIL image as a (C, H, W) tensor of its own type (no scaling)."""
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    img = np.array(pic, copy=True)
    if img.dtype == np.int16:
        img = img.astype(np.int32)  # ember has no int16
    img = from_numpy(img)
    img = img.view(pic.size[1], pic.size[0], len(pic.getbands()))
    return img.permute((2, 0, 1))


def convert_image_dtype(image, dtype=float32):
    """A tensor image as dtype, its values rescaled to dtype's range."""
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def to_pil_image(pic, mode=None):
    """A (C, H, W) tensor or an (H, W, C) ndarray as a PIL image (floats scaled by 255)."""
    if not isinstance(pic, (Tensor, np.ndarray)):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if isinstance(pic, Tensor):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
    else:
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = np.expand_dims(pic, 2)
        if pic.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if isinstance(pic, Tensor):
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(pic.cpu().contiguous().numpy(), (1, 2, 0))
    if npimg.shape[2] == 1:
        expected_mode = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                         np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(npimg.dtype)
        npimg = npimg[:, :, 0]
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        permitted_2_channel_modes = ["LA"]
        if mode is not None and mode not in permitted_2_channel_modes:
            raise ValueError(f"Only modes {permitted_2_channel_modes} are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        permitted_4_channel_modes = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted_4_channel_modes:
            raise ValueError(f"Only modes {permitted_4_channel_modes} are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        permitted_3_channel_modes = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted_3_channel_modes:
            raise ValueError(f"Only modes {permitted_3_channel_modes} are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return Image.fromarray(npimg, mode=mode)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float tensor image."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(image_size, size, max_size=None):
    if len(size) == 1:  # the smaller edge
        h, w = image_size
        short, long = (w, h) if w <= h else (h, w)
        requested_new_short = size if isinstance(size, int) else size[0]
        new_short, new_long = requested_new_short, int(requested_new_short * long / short)
        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=None):
    """img resized to size ((h, w), or the smaller edge for an int, aspect kept): PIL images by
    PIL, tensors by ember (antialias=True as PyTorch's)."""
    if isinstance(interpolation, int):
        _warn_int_interpolation()
        interpolation = _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode")
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, "
                "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
    _, image_height, image_width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)
    # torchvision 0.14 compares a tuple with this list, so it resizes (copies) even to the same
    # size.
    if not isinstance(img, Tensor):
        if antialias is not None and not antialias:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument "
                          "antialias is ignored.")
        return F_pil.resize(img, size=output_size, interpolation=pil_modes_mapping[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """img padded on each border: padding an int, (left/right, top/bottom) or (l, t, r, b)."""
    if not isinstance(img, Tensor):
        return F_pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img, top, left, height, width):
    """The height x width box of img at (top, left), zero-padded outside the image."""
    if not isinstance(img, Tensor):
        return F_pil.crop(img, top, left, height, width)
    return F_t.crop(img, top, left, height, width)


def center_crop(img, output_size):
    """The output_size ((h, w) or an int) box at img's centre, zero-padded if img is smaller."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=None):
    """crop then resize."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    """img mirrored left to right."""
    if not isinstance(img, Tensor):
        return F_pil.hflip(img)
    return F_t.hflip(img)


def vflip(img):
    """img upside down."""
    if not isinstance(img, Tensor):
        return F_pil.vflip(img)
    return F_t.vflip(img)


def five_crop(img, size):
    """The four corner crops and the centre crop of img: (tl, tr, bl, br, center)."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    center = center_crop(img, [crop_height, crop_width])
    return tl, tr, bl, br, center


def ten_crop(img, size, vertical_flip=False):
    """five_crop of img and of its flipped copy (horizontal, or vertical)."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first_five + five_crop(img, size)


def to_grayscale(img, num_output_channels=1):
    """A PIL image of any mode as grayscale, on 1 or 3 channels."""
    if isinstance(img, Image.Image):
        return F_pil.to_grayscale(img, num_output_channels)
    raise TypeError("Input should be PIL Image")


def rgb_to_grayscale(img, num_output_channels=1):
    """An RGB image (PIL or tensor) as grayscale, on 1 or 3 channels."""
    if not isinstance(img, Tensor):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def erase(img, i, j, h, w, v, inplace=False):
    """A tensor image with its (i, j, h, w) box set to v."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def invert(img):
    """img's colours inverted (max - img)."""
    if not isinstance(img, Tensor):
        return F_pil.invert(img)
    if img.ndim < 3:
        raise TypeError("Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")
    bound = 1.0 if img.is_floating_point() else 255.0
    return (bound - img).to(img.dtype)


__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels",
           "to_tensor", "pil_to_tensor", "convert_image_dtype", "to_pil_image", "normalize",
           "resize", "pad", "crop", "center_crop", "resized_crop", "hflip", "vflip", "five_crop",
           "ten_crop", "to_grayscale", "rgb_to_grayscale", "erase", "invert"]
