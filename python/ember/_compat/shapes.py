"""Shapes: broadcasting, atleast_nd, splits, combinations, triangle indices, sum_to_size. Part of
ember._compat (see its __init__)."""
import builtins
import functools
import itertools
import math

from ._registry import _TORCH, _both, _dname, _is_tensor, _method, _out, _torch
from .dtypes import _promote

_E = None  # the ember module, set by install()


# ================================================================================================
# shapes: broadcasting, atleast_nd, splits, combinations
# ================================================================================================


@_torch
def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to (ints, tuples or lists)."""
    size = [1] * builtins.max([1 if isinstance(s, int) else len(s) for s in shapes] or [0])
    for shape in shapes:
        if isinstance(shape, int):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"({shape[i]}): ({shape[i]})")
            if shape[i] == 1 or shape[i] == size[i]:
                continue
            if size[i] != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
            size[i] = shape[i]
    return _E.Size(size)


@_torch
def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shape = broadcast_shapes(*shapes)
    except RuntimeError:
        raise RuntimeError(f"[broadcast_tensors] shapes {shapes} do not broadcast") from None
    return tuple(t.expand(shape) for t in tensors)


@_both
def broadcast_to(input, size):
    """input expanded (as a view) to size."""
    return input.expand(tuple(size))


def _atleast(tensors, n, name):
    if len(tensors) == 1:
        tensors = tensors[0]
    single = _is_tensor(tensors)
    seq = [tensors] if single else list(tensors)
    out = []
    for t in seq:
        if not _is_tensor(t):
            raise TypeError(f"{name}(): expected Tensors, got {type(t).__name__}")
        if t.dim() < n:
            if n == 3 and t.dim() == 2:
                t = t.unsqueeze(-1)
            elif n == 3 and t.dim() == 1:
                t = t.reshape(1, -1, 1)
            else:
                t = t.reshape((1,) * (n - builtins.max(t.dim(), 1)) + (tuple(t.shape) or (1,)))
        out.append(t)
    return out[0] if single else tuple(out)


@_torch
def atleast_1d(*tensors):
    """Each tensor with at least 1 dimension (0-d becomes (1,))."""
    return _atleast(tensors, 1, "atleast_1d")


@_torch
def atleast_2d(*tensors):
    """Each tensor with at least 2 dimensions ((n,) becomes (1, n))."""
    return _atleast(tensors, 2, "atleast_2d")


@_torch
def atleast_3d(*tensors):
    """Each tensor with at least 3 dimensions ((n,) becomes (1, n, 1), (m, n) becomes (m, n, 1))."""
    return _atleast(tensors, 3, "atleast_3d")


def _split_along(input, indices_or_sections, dim, name):
    if isinstance(indices_or_sections, int) and input.shape[dim] % indices_or_sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {indices_or_sections}!")
    return tuple(_E.tensor_split(input, indices_or_sections, dim))


@_both
def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for a 1-D input); sections must divide evenly."""
    if input.dim() < 1:
        raise RuntimeError("torch.hsplit requires a tensor with at least 1 dimension, but got a "
                           "tensor with 0 dimensions!")
    return _split_along(input, indices_or_sections, 1 if input.dim() > 1 else 0, "hsplit")


@_both
def vsplit(input, indices_or_sections):
    """tensor_split along dim 0; sections must divide evenly."""
    if input.dim() < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _split_along(input, indices_or_sections, 0, "vsplit")


@_both
def dsplit(input, indices_or_sections):
    """tensor_split along dim 2; sections must divide evenly."""
    if input.dim() < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {input.dim()} dimensions!")
    return _split_along(input, indices_or_sections, 2, "dsplit")


@_torch
def cartesian_prod(*tensors):
    """The rows of every combination of one element from each 1-D tensor (itertools.product)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = _E.meshgrid(list(tensors), indexing="ij")
    return _E.stack([g.reshape(-1) for g in grids], 1)


@_torch
def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements, one per row."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    # An index of shape (0, r) when there are none: still a result autograd follows.
    index = _E.tensor(rows, dtype=_E.int64, device=input.device).reshape(-1, r)
    return input[index]


@_torch
def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) as the blocks of a block-diagonal matrix."""
    if not tensors:
        return _E.empty(1, 0)
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1
                      else t)
    dtype = getattr(_E, functools.reduce(_promote, [_dname(b.dtype) for b in blocks]))
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to(dtype)
        right = width - left - b.shape[1]
        rows.append(_E.cat([b.new_zeros(b.shape[0], left), b, b.new_zeros(b.shape[0], right)], 1))
        left += b.shape[1]
    return _E.cat(rows, 0)


def _tri_indices(row, col, offset, dtype, device, upper):
    i = _E.arange(row, device=device).unsqueeze(1)
    j = _E.arange(col, device=device).unsqueeze(0)
    mask = (j - i >= offset) if upper else (j - i <= offset)
    return _E.nonzero(mask).t().to(dtype)


@_torch
def tril_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of a row x col matrix's lower triangle, row by row."""
    return _tri_indices(row, col, offset, dtype or _E.int64, device, upper=False)


@_torch
def triu_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of a row x col matrix's upper triangle, row by row."""
    return _tri_indices(row, col, offset, dtype or _E.int64, device, upper=True)


@_method
def sum_to_size(self, *size):
    """self summed over the dimensions where size is 1 (the inverse of expand)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not size:
        return self.sum()  # PyTorch's sum_to: an empty size is a full sum (ints become int64)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self
    if lead:
        out = out.sum(list(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1]
    if dims:
        out = out.sum(dims, keepdim=True)
    return out


# --- copies and scatters of views (composites whose gradients come from the ops they use) -----

@_both
def narrow_copy(input, dim, start, length):
    """input.narrow(dim, start, length) as a new tensor."""
    return input.narrow(dim, start, length).clone()


@_torch
def constant_pad_nd(input, pad, value=0):
    """F.pad(input, pad, 'constant', value) (the ATen op's name)."""
    return _E.nn.functional.pad(input, list(pad), "constant", value)


def _scatter_into_view(input, src, view):
    """A copy of input whose view (a function of a tensor) holds src: differentiable in both."""
    out = input.clone()
    view(out).copy_(src)
    return out


@_both
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal (offset, dim1, dim2) replaced by src, out of place."""
    return _scatter_into_view(input, src, lambda t: t.diagonal(offset, dim1, dim2))


@_both
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input with input.as_strided(size, stride, storage_offset) replaced by src, out of place."""
    return _scatter_into_view(input, src, lambda t: t.as_strided(size, stride, storage_offset))


@_both
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The view of input's storage that src's geometry (size, stride, offset) names: the inverse
    of src = base[start:end:step] along dim, as functionalization uses it (PyTorch 2.2)."""
    return input.as_strided(src.size(), src.stride(), src.storage_offset())




@_method
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=False, requires_grad=False):
    """An uninitialised tensor of size and stride, self's dtype and device by default."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


@_torch
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """An uninitialised tensor of the given size and stride (a strided view of fresh storage)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs "
                           f"{len(size)}")
    reach = 0 if any(n == 0 for n in size) else 1 + builtins.sum((n - 1) * s
                                                                 for n, s in zip(size, stride))
    out = _E.empty(reach, dtype=dtype, device=device).as_strided(size, stride, 0)
    return out.requires_grad_() if requires_grad else out


@_torch
def view_as_real_copy(input, *, out=None):
    """view_as_real's values in a tensor of their own."""
    return _out(_E.view_as_real(input).clone(), out)


@_torch
def view_as_complex_copy(input, *, out=None):
    """view_as_complex's values in a tensor of their own."""
    return _out(_E.view_as_complex(input).clone(), out)


@_both
def conj_physical_(input):
    """The complex conjugate in place (nothing to do for a real tensor)."""
    if input.is_complex():
        input.imag.neg_()
    return input


@_torch
def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices, as a tuple of tensors (PyTorch 2.2)."""
    if not _is_tensor(indices):
        indices = _E.tensor(indices)
    if indices.is_floating_point() or indices.is_complex() or str(indices.dtype) == "ember.bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = functools.reduce(lambda a, b: a * b, shape, 1)
    if indices.numel() and (bool((indices < -total).any()) or bool((indices >= total).any())):
        raise ValueError("'indices' must be in range [-{0}, {1}), but got values out of it"
                         .format(total, total))
    rest = _E.remainder(indices.to(_E.int64), total) if total else indices.to(_E.int64)
    coords = []
    for size in reversed(shape):
        coords.append(_E.remainder(rest, size))
        rest = _E.div(rest, size, rounding_mode="floor")
    return tuple(reversed(coords))


@_torch
def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """input[..., start:end:step, ...] along dim, as a new tensor."""
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return _out(input[tuple(index)].clone(), out)


# ================================================================================================
# symbolic sizes: ember's sizes are plain ints, so these take PyTorch's path for plain numbers
# ================================================================================================


class SymInt:
    """A symbolic int of a traced shape (torch.SymInt): ember's sizes are never symbolic, so
    isinstance(n, (int, SymInt)) checks see plain ints."""


class SymFloat:
    """A symbolic float (torch.SymFloat); ember never makes one."""


class SymBool:
    """A symbolic bool (torch.SymBool); ember never makes one."""


_TORCH.update(SymInt=SymInt, SymFloat=SymFloat, SymBool=SymBool)


@_torch
def sym_int(a):
    """int(a), rounding toward zero."""
    return builtins.int(math.trunc(a)) if isinstance(a, builtins.float) else builtins.int(a)


@_torch
def sym_float(a):
    return builtins.float(a)


@_torch
def sym_not(a):
    return not a


@_torch
def sym_sqrt(a):
    return math.sqrt(a)


@_torch
def sym_max(a, b):
    """max(a, b), a float when either is."""
    m = builtins.max(a, b)
    return builtins.float(m) if isinstance(a, builtins.float) or isinstance(b, builtins.float) \
        else m


@_torch
def sym_min(a, b):
    """min(a, b), a float when either is."""
    m = builtins.min(a, b)
    return builtins.float(m) if isinstance(a, builtins.float) or isinstance(b, builtins.float) \
        else m


@_torch
def sym_sum(args):
    return builtins.sum(args)


@_torch
def sym_ite(b, t, f):
    """t if b else f."""
    return t if b else f


@_torch
def sym_fresh_size(expr):
    """expr itself: a fresh symbol only matters while tracing."""
    return expr


_INT64 = (-(1 << 63), (1 << 63) - 1)


@_torch
def sym_constrain_range(size, *, min=None, max=None):
    """Checks that size lies in [min, max] (the int64 range where unset)."""
    lo = _INT64[0] if min is None else min
    hi = _INT64[1] if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


@_torch
def sym_constrain_range_for_size(size, *, min=None, max=None):
    """sym_constrain_range for a size: min at least 0."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


@_torch
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of size whose memory holds its dims in physical_layout's order
    (physical_layout[0] outermost)."""
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {list(order)} is not a permutation "
                           f"of the {len(size)} dims")
    t = _E.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in builtins.range(len(size))]
    t = t.permute(*inverse)
    return t.requires_grad_(True) if requires_grad else t


@_both
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input), cut or padded with fill_value to exactly size rows."""
    found = input.nonzero()
    if found.shape[0] >= size:
        return found[:size]
    pad = _E.full((size - found.shape[0], found.shape[1]), fill_value, dtype=found.dtype,
                  device=found.device)
    return _E.cat([found, pad])


@_method
def dim_order(self):
    """The dims from outermost to innermost in memory (by stride, ties by position)."""
    strides = self.stride()
    return tuple(sorted(builtins.range(self.dim()), key=lambda d: -strides[d]))
