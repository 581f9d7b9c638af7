"""The transforms on ember tensors (..., C, H, W), built from ember's ops
(torchvision.transforms.functional_tensor)."""
import math

import numpy as np

from ... import arange, as_tensor, empty, float32, float64, from_numpy, full, int32, \
    int64, uint8
from ...nn.functional import interpolate

# The largest value of each integer dtype ember has; 1 for the floating dtypes.
_MAX_VALUES = {uint8: 255, int32: 2**31 - 1, int64: 2**63 - 1}


def _is_tensor_a_torch_image(x):
    return x.ndim >= 2


def _assert_image_tensor(img):
    if not _is_tensor_a_torch_image(img):
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    """[channels, height, width] of img (..., [C,] H, W)."""
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def get_image_size(img):
    """[width, height] of img."""
    _assert_image_tensor(img)
    return [img.shape[-1], img.shape[-2]]


def get_image_num_channels(img):
    """The number of channels of img (1 for an (H, W) image)."""
    _assert_image_tensor(img)
    if img.ndim == 2:
        return 1
    return img.shape[-3]


def _max_value(dtype):
    return _MAX_VALUES.get(dtype, 1)


def _is_floating_dtype(dtype):
    return empty(0, dtype=dtype).is_floating_point()


def _assert_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but "
                        f"found {c}")


def convert_image_dtype(image, dtype=float32):
    """image as dtype, its values rescaled from image.dtype's range ([0, 1] for floats)."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if _is_floating_dtype(dtype):
            return image.to(dtype)
        if (image.dtype == float32 and dtype in (int32, int64)) or (
                image.dtype == float64 and dtype == int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # 1 - eps below max + 1, so that 1.0 maps to max and the bins stay equal in width.
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if _is_floating_dtype(dtype):
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        # ember's div has no rounding_mode: floor in float64, exact for these powers of two.
        factor = int((input_max + 1) // (output_max + 1))
        return image.to(float64).div(factor).floor().to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def _flip(img, dim):
    # ember has no flip: gather the axis in reverse.
    n = img.shape[dim]
    return img.index_select(dim, arange(n - 1, -1, -1, device=img.device))


def vflip(img):
    """img upside down."""
    _assert_image_tensor(img)
    return _flip(img, -2)


def hflip(img):
    """img mirrored left to right."""
    _assert_image_tensor(img)
    return _flip(img, -1)


def crop(img, top, left, height, width):
    """img[..., top:top + height, left:left + width], zero-padded where it leaves the image."""
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img, num_output_channels=1):
    """The ITU-R 601-2 luma of an RGB img (..., 3, H, W), on 1 or 3 channels."""
    if img.ndim < 3:
        raise TypeError("Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        # PIL's weights, not the ones in the ITU-R 601-2 recommendation
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = l_img.unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _parse_pad_padding(padding):
    """padding (int, [all], [lr, tb] or [l, t, r, b]) as [left, right, top, bottom]."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _pad_indices(n, before, after, mode):
    # numpy's edge / reflect / symmetric padding of the positions 0..n-1.
    if mode == "reflect" and (before >= n or after >= n):
        raise RuntimeError(f"Padding size should be less than the corresponding input dimension, "
                           f"but got: padding ({before}, {after}) of a dimension of size {n}")
    return from_numpy(np.pad(np.arange(n, dtype=np.int64), (before, after), mode=mode))


def pad(img, padding, fill=0, padding_mode="constant"):
    """img with `padding` added on its borders (constant fill, edge, reflect or symmetric)."""
    _assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, right, top, bottom = _parse_pad_padding(padding)
    # Negative padding crops.
    h, w = img.shape[-2:]
    img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    left, right, top, bottom = (max(p, 0) for p in (left, right, top, bottom))
    h, w = img.shape[-2:]
    if padding_mode == "constant":
        value = fill if img.is_floating_point() else int(fill)
        out = full(tuple(img.shape[:-2]) + (h + top + bottom, w + left + right), value,
                   dtype=img.dtype, device=img.device)
        out[..., top:top + h, left:left + w] = img
        return out
    mode = "edge" if padding_mode == "edge" else padding_mode
    rows = _pad_indices(h, top, bottom, mode).to(img.device)
    cols = _pad_indices(w, left, right, mode).to(img.device)
    return img.index_select(-2, rows).index_select(-1, cols)


def _aa_filter(x, interpolation):
    x = np.abs(x)
    if interpolation == "bilinear":
        return np.maximum(0.0, 1.0 - x)
    a = -0.5  # PIL's bicubic, which PyTorch's antialiased bicubic follows
    return np.where(x < 1.0, ((a + 2.0) * x - (a + 3.0)) * x * x + 1,
                    np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _resize_matrix(n_in, n_out, interpolation, antialias):
    """The (n_out, n_in) matrix of PyTorch's bicubic (A = -0.75) or antialiased resampling
    (align_corners=False) along one axis."""
    scale = n_in / n_out
    m = np.zeros((n_out, n_in))
    if antialias:
        # PyTorch's _upsample_*_aa: the filter widened by the scale when downsampling.
        interp_size = 2 if interpolation == "bilinear" else 4
        support = interp_size * 0.5 * scale if scale >= 1.0 else interp_size * 0.5
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(n_out):
            center = scale * (i + 0.5)
            xmin = max(int(center - support + 0.5), 0)
            xmax = min(int(center + support + 0.5), n_in)
            w = _aa_filter((np.arange(xmin, xmax) - center + 0.5) * invscale, interpolation)
            total = w.sum()
            m[i, xmin:xmax] = w / total if total != 0 else w
        return m
    a = -0.75
    for i in range(n_out):
        src = scale * (i + 0.5) - 0.5
        x0 = math.floor(src)
        t = src - x0
        coeffs = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                  ((a + 2) * t - (a + 3)) * t * t + 1,
                  ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                  ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
        for k, c in enumerate(coeffs):
            m[i, min(max(x0 - 1 + k, 0), n_in - 1)] += c
    return m


def _nearest_indices(n_in, n_out, device):
    """The input position each output reads, as PyTorch's nearest computes it: floor(o * scale)
    with a float32 scale, not always floor(o * n_in / n_out) (26 -> 22: o = 11 reads 12)."""
    if n_out == n_in:
        index = np.arange(n_out)
    elif n_out == 2 * n_in:
        index = np.arange(n_out) >> 1
    else:
        scale = np.float32(n_in) / np.float32(n_out)
        index = np.floor(np.arange(n_out, dtype=np.float32) * scale).astype(np.int64)
        index = np.minimum(index, n_in - 1)
    return from_numpy(index.astype(np.int64)).to(device)


def resize(img, size, interpolation="bilinear", antialias=None):
    """img (..., H, W) resized to size [h, w]: bilinear through ember.nn.functional.interpolate,
    nearest as a gather of PyTorch's source pixels, bicubic and antialiasing as PyTorch's
    resampling matrices."""
    _assert_image_tensor(img)
    size = list(size)
    if antialias is None:
        antialias = False
    if antialias and interpolation not in ["bilinear", "bicubic"]:
        raise ValueError("Antialias option is supported for bilinear and bicubic interpolation "
                         "modes only")
    if interpolation not in ["nearest", "bilinear", "bicubic"]:
        raise NotImplementedError(f"Interpolation mode '{interpolation}' is unsupported with "
                                  "Tensor input (nearest, bilinear and bicubic are)")
    if interpolation == "nearest":
        # ember's interpolate computes the source pixel exactly, PyTorch in float32: gather
        # PyTorch's pixels, of any dtype, as they are.
        rows = _nearest_indices(img.shape[-2], size[0], img.device)
        cols = _nearest_indices(img.shape[-1], size[1], img.device)
        return img.index_select(-2, rows).index_select(-1, cols)
    shape, out_dtype = tuple(img.shape), img.dtype
    x = img if out_dtype in (float32, float64) else img.to(float32)
    # Every leading dim in the channel dim: each plane is resized alone.
    x = x.reshape(1, -1, shape[-2], shape[-1])
    if interpolation == "bilinear" and not antialias:
        x = interpolate(x, size=size, mode="bilinear", align_corners=False)
    else:
        rows = as_tensor(_resize_matrix(shape[-2], size[0], interpolation, antialias),
                         dtype=x.dtype, device=x.device)
        cols = as_tensor(_resize_matrix(shape[-1], size[1], interpolation, antialias),
                         dtype=x.dtype, device=x.device)
        x = rows.matmul(x).matmul(cols.t())  # (oH, H) @ x @ (W, oW)
    x = x.reshape(*shape[:-2], size[0], size[1])
    if interpolation == "bicubic" and out_dtype == uint8:
        x = x.clamp(min=0, max=255)
    if x.dtype != out_dtype:
        if not _is_floating_dtype(out_dtype):
            x = x.round()
        x = x.to(out_dtype)
    return x


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float (..., C, H, W) tensor."""
    _assert_image_tensor(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = as_tensor(mean, dtype=dtype, device=tensor.device)
    std = as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to "
                         "division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


def erase(img, i, j, h, w, v, inplace=False):
    """img with its (i, j, h, w) box set to v."""
    _assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img

