"""torchvision.io's image functions through PIL: read, decode and encode PNG and JPEG as uint8
(C, H, W) ember tensors, with torchvision's channel conversions (ImageReadMode)."""
import enum
import io

import numpy as np
from PIL import Image

from ... import Tensor, device as _device, from_numpy, uint8

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_png", "encode_png", "write_png",
           "decode_jpeg", "encode_jpeg", "write_jpeg", "decode_image", "read_image"]

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"


class ImageReadMode(enum.Enum):
    """The channels a decoded image is converted to (UNCHANGED keeps the file's)."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4


def read_file(path):
    """The bytes of a file as a 1-D uint8 tensor."""
    return from_numpy(np.fromfile(path, dtype=np.uint8))


def write_file(filename, data):
    """Writes a 1-D uint8 tensor's bytes to a file."""
    with open(filename, "wb") as f:
        f.write(_bytes(data))


def _bytes(data):
    if not isinstance(data, Tensor):
        raise TypeError(f"Expected a uint8 ember tensor, got {type(data).__name__}")
    if data.dtype != uint8 or data.dim() != 1:
        raise RuntimeError(f"Expected a 1-D uint8 tensor of encoded bytes, got {data.dtype} of "
                           f"shape {tuple(data.shape)}")
    return data.cpu().contiguous().numpy().tobytes()


def _chw(array):
    """An (H, W) or (H, W, C) uint8 array as a (C, H, W) tensor."""
    if array.ndim == 2:
        array = array[:, :, None]
    return from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def _png_gray(im):
    """The gray channel libpng gives torchvision: RGB weighted by its fixed-point 0.2989 and 0.587
    (9794, 19234, 3740 / 2**15) and truncated; gray pixels pass as they are. PIL's "L" rounds
    other weights, one level off in a fraction of pixels."""
    if im.mode in ("1", "L", "LA"):
        return np.array(im.convert("L") if im.mode == "1" else im.getchannel("L"))
    rgb = np.array(im.convert("RGB")).astype(np.uint32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    gray = ((9794 * r + 19234 * g + 3740 * b) >> 15).astype(np.uint8)
    return np.where((r == g) & (g == b), rgb[..., 0].astype(np.uint8), gray)


def _alpha(im):
    if im.mode in ("LA", "RGBA", "PA") or "transparency" in im.info:
        return np.array(im.convert("RGBA"))[..., 3]
    return np.full((im.height, im.width), 255, np.uint8)


def _decode_png(data, mode):
    # IHDR's bit depth: PIL keeps 16-bit gray as "I" and cuts 16-bit colour to 8 bits, while
    # torchvision 0.14 decodes neither.
    if len(data) > 24 and data[24] > 8:
        raise RuntimeError("At most 8-bit PNG images are supported currently.")
    im = Image.open(io.BytesIO(data))
    im.load()
    if mode == ImageReadMode.UNCHANGED:
        # A palette image stays its indices, as libpng leaves it for torchvision.
        return _chw(np.array(im.convert("L") if im.mode == "1" else im))
    if mode == ImageReadMode.GRAY:
        return _chw(_png_gray(im))
    if mode == ImageReadMode.GRAY_ALPHA:
        return _chw(np.stack([_png_gray(im), _alpha(im)], axis=-1))
    if mode == ImageReadMode.RGB:
        return _chw(np.array(im.convert("RGB")))
    return _chw(np.array((im.convert("L") if im.mode == "1" else im).convert("RGBA")))


def _decode_jpeg(data, mode):
    if mode in (ImageReadMode.GRAY_ALPHA, ImageReadMode.RGB_ALPHA):
        raise RuntimeError("The provided mode is not supported for JPEG files")
    im = Image.open(io.BytesIO(data))
    if mode == ImageReadMode.GRAY:
        # libjpeg's own grayscale output (the luma plane), as torchvision asks it for.
        im.draft("L", im.size)
        im.load()
        return _chw(np.array(im if im.mode == "L" else im.convert("L")))
    im.load()
    return _chw(np.array(im.convert("RGB") if mode == ImageReadMode.RGB else im))


def _check_mode(mode):
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode, got {mode!r}")


def decode_png(input, mode=ImageReadMode.UNCHANGED):
    """A PNG's bytes (1-D uint8 tensor) decoded to a uint8 (C, H, W) tensor."""
    _check_mode(mode)
    data = _bytes(input)
    if not data.startswith(_PNG_MAGIC):
        raise RuntimeError("Content is not png")
    return _decode_png(data, mode)


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu"):
    """A JPEG's bytes (1-D uint8 tensor) decoded to a uint8 (C, H, W) tensor on `device`."""
    _check_mode(mode)
    data = _bytes(input)
    if not data.startswith(_JPEG_MAGIC):
        raise RuntimeError("Not a JPEG file")
    image = _decode_jpeg(data, mode)
    return image if _device(device).type == "cpu" else image.to(device)


def decode_image(input, mode=ImageReadMode.UNCHANGED):
    """A PNG's or JPEG's bytes (1-D uint8 tensor) decoded to a uint8 (C, H, W) tensor."""
    _check_mode(mode)
    data = _bytes(input)
    if data.startswith(_PNG_MAGIC):
        return _decode_png(data, mode)
    if data.startswith(_JPEG_MAGIC):
        return _decode_jpeg(data, mode)
    raise RuntimeError("Unsupported image file. Only jpeg and png are currently supported.")


def read_image(path, mode=ImageReadMode.UNCHANGED):
    """A PNG or JPEG file as a uint8 (C, H, W) tensor."""
    return decode_image(read_file(path), mode)


def _to_pil(input, what):
    if not isinstance(input, Tensor):
        raise TypeError(f"Expected a uint8 ember tensor, got {type(input).__name__}")
    if input.dtype != uint8:
        raise RuntimeError(f"[{what}] input tensor dtype should be uint8, got {input.dtype}")
    if input.dim() != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError(f"[{what}] expected a (C, H, W) tensor with 1 or 3 channels, got shape "
                           f"{tuple(input.shape)}")
    array = input.cpu().contiguous().numpy()
    return Image.fromarray(array[0] if array.shape[0] == 1 else array.transpose(1, 2, 0))


def encode_png(input, compression_level=6):
    """A uint8 (C, H, W) tensor (C 1 or 3) as a PNG's bytes (1-D uint8 tensor)."""
    if not 0 <= compression_level <= 9:
        raise RuntimeError(f"Compression level should be between 0 and 9, got {compression_level}")
    buf = io.BytesIO()
    _to_pil(input, "encode_png").save(buf, format="PNG", compress_level=compression_level)
    return from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def write_png(input, filename, compression_level=6):
    """Writes a uint8 (C, H, W) tensor (C 1 or 3) to a PNG file."""
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input, quality=75):
    """A uint8 (C, H, W) tensor (C 1 or 3) as a JPEG's bytes (1-D uint8 tensor)."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    buf = io.BytesIO()
    _to_pil(input, "encode_jpeg").save(buf, format="JPEG", quality=quality)
    return from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def write_jpeg(input, filename, quality=75):
    """Writes a uint8 (C, H, W) tensor (C 1 or 3) to a JPEG file."""
    write_file(filename, encode_jpeg(input, quality))
