"""Layouts and memory formats, and the Tensor methods that gain PyTorch's memory_format keyword.
Part of ember._compat (see its __init__)."""
import functools

from ._registry import _PROPS, _TORCH


# ================================================================================================
# layouts and memory formats
# ================================================================================================

class layout:
    """A tensor's layout; ember's only one is `strided` (torch.layout)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return (_layout_by_name, (self._name,))


class memory_format:
    """How a 4-D/5-D tensor orders its dimensions in memory (torch.memory_format)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return (_memory_format_by_name, (self._name,))


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_FORMATS = {f._name: f for f in (contiguous_format, preserve_format, channels_last,
                                  channels_last_3d)}


def _layout_by_name(name):
    return strided


def _memory_format_by_name(name):
    return _FORMATS[name]


_TORCH.update(layout=layout, strided=strided, memory_format=memory_format,
              contiguous_format=contiguous_format, preserve_format=preserve_format,
              channels_last=channels_last, channels_last_3d=channels_last_3d,
              legacy_contiguous_format=contiguous_format)
_PROPS["layout"] = property(lambda self: strided, doc="strided: ember's only layout.")

# channels_last orders (N, C, H, W) as (N, H, W, C) in memory; channels_last_3d (N, C, D, H, W)
# as (N, D, H, W, C). The permutation that makes such a tensor row-major:
_LAST = {"channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def _in_format(x, fmt):
    """x copied into memory format fmt (the values are unchanged; only the strides differ)."""
    if fmt is None or fmt is preserve_format:
        return x
    if fmt is contiguous_format:
        return _ORIGINAL["contiguous"](x)
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be a memory_format, got {type(fmt).__name__}")
    rank, perm = _LAST[fmt._name]
    if x.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    inverse = sorted(range(rank), key=lambda i: perm[i])
    return _ORIGINAL["contiguous"](x.permute(*perm)).permute(*inverse)


def _is_in_format(x, fmt):
    rank, perm = _LAST[fmt._name]
    if x.dim() != rank:
        return False
    expected, size = 1, x.shape
    for d in reversed(perm):
        if size[d] != 1 and x.stride(d) != expected:
            return False
        expected *= size[d]
    return True


def _wrap_memory_format(original, fmt_default):
    @functools.wraps(original)
    def method(self, *args, memory_format=fmt_default, **kwargs):
        out = original(self, *args, **kwargs)
        return out if memory_format is fmt_default else _in_format(out, memory_format)
    return method


def _wrap_is_contiguous(original):
    @functools.wraps(original)
    def is_contiguous(self, memory_format=contiguous_format):
        if memory_format is contiguous_format:
            return original(self)
        if memory_format is preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return _is_in_format(self, memory_format)
    return is_contiguous


def _wrap_numpy(original):
    @functools.wraps(original)
    def numpy(self, *, force=False):
        if force:
            return original(self.detach().cpu())
        return original(self)
    return numpy


# The existing methods that gain PyTorch's keywords: (name, wrapper), and the originals.
_ORIGINAL = {}
_WRAPPED = [("clone", lambda f: _wrap_memory_format(f, preserve_format)),
            ("contiguous", lambda f: _wrap_memory_format(f, contiguous_format)),
            ("cpu", lambda f: _wrap_memory_format(f, preserve_format)),
            ("is_contiguous", _wrap_is_contiguous),
            ("numpy", _wrap_numpy)]
