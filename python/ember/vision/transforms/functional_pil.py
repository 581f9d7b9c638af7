"""The transforms on PIL images, through PIL (torchvision.transforms.functional_pil)."""
import numbers

import numpy as np
from PIL import Image, ImageOps


def _is_pil_image(img):
    return isinstance(img, Image.Image)


def _check(img):
    if not _is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width] of img."""
    if _is_pil_image(img):
        channels = len(img.getbands()) if hasattr(img, "getbands") else img.channels
        width, height = img.size
        return [channels, height, width]
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_size(img):
    """[width, height] of img."""
    if _is_pil_image(img):
        return list(img.size)
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_num_channels(img):
    """The number of bands of img."""
    if _is_pil_image(img):
        return len(img.getbands()) if hasattr(img, "getbands") else img.channels
    raise TypeError(f"Unexpected type {type(img)}")


def hflip(img):
    """img mirrored left to right."""
    _check(img)
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    """img upside down."""
    _check(img)
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def _parse_fill(fill, img, name="fillcolor"):
    """fill as PIL's keyword argument {name: value}: one value per band, ints unless mode "F"."""
    num_channels = get_image_num_channels(img)
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) != num_channels:
            raise ValueError("The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {num_channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    """img with `padding` added on its borders (constant fill, edge, reflect or symmetric)."""
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, list):
        padding = tuple(padding)
    if isinstance(padding, tuple) and len(padding) not in [1, 2, 4]:
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")

    if padding_mode == "constant":
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=padding, **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=padding, **opts)

    if isinstance(padding, int):
        p = [padding] * 4
    elif len(padding) == 2:
        p = [padding[0], padding[1], padding[0], padding[1]]
    else:
        p = list(padding)
    crop_left, crop_top, crop_right, crop_bottom = (max(-x, 0) for x in p)  # negative: crop
    if crop_left or crop_top or crop_right or crop_bottom:
        img = img.crop((crop_left, crop_top, img.width - crop_right, img.height - crop_bottom))
    pad_left, pad_top, pad_right, pad_bottom = (max(x, 0) for x in p)
    widths = ((pad_top, pad_bottom), (pad_left, pad_right))
    if img.mode == "P":
        palette = img.getpalette()
        out = Image.fromarray(np.pad(np.asarray(img), widths, mode=padding_mode))
        out.putpalette(palette)
        return out
    array = np.asarray(img)
    if array.ndim == 3:
        widths = widths + ((0, 0),)
    return Image.fromarray(np.pad(array, widths, mode=padding_mode))


def crop(img, top, left, height, width):
    """The (left, top, left + width, top + height) box of img (zero outside it)."""
    _check(img)
    return img.crop((left, top, left + width, top + height))


def resize(img, size, interpolation=Image.Resampling.BILINEAR):
    """img resized to size [h, w] by PIL (which antialiases)."""
    _check(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def to_grayscale(img, num_output_channels):
    """img in mode "L", or as RGB with three equal bands."""
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.array(img.convert("L"), dtype=np.uint8)
        return Image.fromarray(np.dstack([gray, gray, gray]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img):
    """img's colours inverted."""
    _check(img)
    return ImageOps.invert(img)
