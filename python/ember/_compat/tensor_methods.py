"""Tensor conveniences: in-place random fills, index_put, put, properties, the
in-place variants install() adds. Part of ember._compat (see its __init__)."""
import builtins
import math
import warnings

from ._registry import _PROPS, _as_tensor, _both, _dname, _method, _torch
from .dtypes import can_cast
from .shapes import broadcast_tensors
from .reductions import _legacy

_E = None  # the ember module, set by install()


# ================================================================================================
# Tensor conveniences
# ================================================================================================


@_method
def to_dense(self, dtype=None):
    """self (in dtype): ember's tensors are dense already."""
    return self if dtype is None else self.to(dtype)


@_method
def resize(self, *sizes):
    """The deprecated out-of-place resize: self in another shape of as many elements (a copy,
    differentiable)."""
    warnings.warn("non-inplace resize is deprecated")
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    count = math.prod(shape)
    if count != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({count} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            f"elements). autograd's resize can only change the shape of a given tensor, while "
            f"preserving the number of elements. ")
    return self.contiguous().clone().view(shape)


@_method
def resize_as(self, tensor):
    """The deprecated out-of-place resize_as: resize(tensor's shape)."""
    return resize(self, tuple(tensor.shape))


@_method
def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fills self with exp of N(mean, std) samples."""
    return self.normal_(mean, std, generator=generator).exp_()


@_method
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fills self with Cauchy(median, sigma) samples."""
    u = _E.empty_like(self, dtype=_E.float64).uniform_(generator=generator)
    return self.copy_(median + sigma * _E.tan(math.pi * (u - 0.5)))


@_method
def geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    u = _E.empty_like(self, dtype=_E.float64).uniform_(generator=generator)
    return self.copy_(_E.ceil(_E.log1p(-u) / math.log1p(-p)).clamp(min=1))


@_method
def is_same_size(self, other):
    """Whether self and other have the same shape."""
    return tuple(self.shape) == tuple(other.shape)


@_method
def is_set_to(self, tensor):
    """Whether self and tensor view the same memory with the same shape and strides."""
    return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
            and self.stride() == tensor.stride() and self.device == tensor.device)


@_method
def apply_(self, callable):
    """Replaces each element x of a CPU tensor by callable(x), in Python (slow, as PyTorch's)."""
    if self.is_cuda:
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    with _E.no_grad():
        self.copy_(_E.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


@_method
def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal; wrap restarts it every N+1 rows of a tall matrix."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    shape = tuple(self.shape)
    strides = [1] * len(shape)  # row-major strides of a contiguous copy
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    step, size = builtins.sum(strides), builtins.min(shape)
    positions = [k * step for k in range(size)]
    height, width = shape[0], shape[-1]
    if wrap and self.dim() == 2 and height > width + 1:
        wrap_size = (self.numel() + step - 1) // step - size
        start = strides[0] * (width + 1)
        positions += [start + k * step for k in range(wrap_size)]
    idx = _E.tensor(positions, dtype=_E.int64, device=self.device)
    if self.is_contiguous():
        self.view(-1)[idx] = fill_value
    else:
        flat = self.contiguous().view(-1)
        flat[idx] = fill_value
        self.copy_(flat.view(shape))
    return self


def _linear_index(self, indices):
    """Long index tensors (bool masks expanded, negatives wrapped) over self's leading dims, as one
    index into self viewed as (prod(leading dims), *rest)."""
    longs = []
    for idx in indices:
        if _dname(idx.dtype) in ("bool", "uint8"):
            longs.extend(_E.nonzero(idx.bool()).unbind(1))
        else:
            longs.append(idx)
    if len(longs) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    longs = broadcast_tensors(*longs)
    lin = None
    for d, idx in enumerate(longs):
        idx = _E.where(idx < 0, idx + self.shape[d], idx)
        lin = idx if lin is None else lin * self.shape[d] + idx
    return lin, len(longs)


@_method
def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (or += with accumulate, adding duplicates up), in place."""
    indices = tuple(indices)
    if not accumulate:
        self[indices] = values
        return self
    lin, k = _linear_index(self, indices)
    rest = tuple(self.shape[k:])
    flat_shape = (-1,) + rest
    src = _as_tensor(values, self).to(self.dtype).expand(tuple(lin.shape) + rest).reshape(
        flat_shape)
    if self.is_contiguous():
        self.view(flat_shape).index_add_(0, lin.reshape(-1), src)
    else:
        flat = self.contiguous().view(flat_shape)
        flat.index_add_(0, lin.reshape(-1), src)
        self.copy_(flat.view(self.shape))
    return self


@_both
def index_put(input, indices, values, accumulate=False):
    """input with input[indices] = values (or += with accumulate), out of place."""
    return index_put_(input.clone(), indices, values, accumulate)


@_method
def put_(self, index, source, accumulate=False):
    """Writes source at the flat (row-major) positions index, in place (+= with accumulate)."""
    flat = self.reshape(-1) if self.is_contiguous() else self.contiguous().reshape(-1)
    index_put_(flat, (index.reshape(-1),), source.reshape(-1), accumulate)
    if flat.data_ptr() != self.data_ptr():
        self.copy_(flat.view(self.shape))
    return self


@_both
def put(input, index, source, accumulate=False):
    """input with source written at the flat positions index, out of place."""
    return put_(input.clone(), index, source, accumulate)


@_both
def index_fill(input, dim, index, value):
    """input with the slices at index along dim set to value, out of place."""
    return input.clone().index_fill_(dim, index, value)


def _along(input, dim, index, source, op):
    """source's slices at index along dim, as a scatter of index broadcast over source's other
    dims (index_copy's and index_reduce's checks, as PyTorch's)."""
    if index.dim() > 1:
        raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {index.dim()})")
    x = input if input.dim() else input.reshape(1)
    src = source if source.dim() else source.reshape(1)
    d = dim % x.dim()
    if src.dim() != x.dim() or src.shape[d] != index.numel():
        raise IndexError(f"{op}(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({src.shape[d] if src.dim() > d else 1})")
    shape = [1] * src.dim()
    shape[d] = index.numel()
    return x, d, index.reshape(shape).expand(tuple(src.shape)), src


@_both
def index_copy(input, dim, index, source):
    """input with source's slices written at index along dim, out of place."""
    x, d, idx, src = _along(input, dim, index, source, "index_copy")
    return x.scatter(d, idx, src).reshape(input.shape)


@_both
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices combined in at index along dim by reduce ('prod', 'mean',
    'amax' or 'amin'), out of place."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                           f"but got {reduce}.")
    x, d, idx, src = _along(input, dim, index, source, "index_reduce")
    return x.scatter_reduce(d, idx, src, reduce, include_self=include_self).reshape(input.shape)


@_method
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """index_reduce in place."""
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


@_both
def masked_scatter(input, mask, source):
    """input with the positions where mask is True taken, in order, from source."""
    input, mask = broadcast_tensors(input, mask)
    return input.clone().masked_scatter_(mask, source)


@_both
def unsafe_chunk(input, chunks, dim=0):
    """chunk (ember's views carry no unsafe variant)."""
    return input.chunk(chunks, dim)


@_both
def unsafe_split(tensor, split_size_or_sections, dim=0):
    """split (ember's views carry no unsafe variant)."""
    return tensor.split(split_size_or_sections, dim)


@_both
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes (ember's views carry no unsafe variant)."""
    return input.split_with_sizes(split_sizes, dim)


@_both
def resolve_neg(input):
    """input itself: ember has no lazy negation."""
    return input



@_both
def is_neg(input):
    """False: ember has no lazy negation."""
    return False



@_both
def is_inference(input):
    """False: ember's inference mode makes ordinary tensors."""
    return False


@_both
def is_distributed(input):
    """False (the old THD flag PyTorch still reports)."""
    return False




@_torch
def clone(input, *, memory_format=None):
    """A copy of input (torch.clone), laid out as memory_format says (None: as input is)."""
    return input.clone() if memory_format is None else input.clone(memory_format=memory_format)


@_torch
def detach(input):
    """input without its autograd history, sharing its storage (torch.detach)."""
    return input.detach()


@_torch
def get_device(input):
    """input's GPU index, or -1 on the CPU."""
    return input.get_device()


_PROPS.update(
    is_meta=property(lambda self: False, doc="False: ember has no meta tensors."),
    is_xpu=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_ipu=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_mps=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_ort=property(lambda self: False, doc="False: ember's devices are CPU and CUDA."),
    is_mkldnn=property(lambda self: False, doc="False: ember has no MKL-DNN layout."),
    is_sparse=property(lambda self: False, doc="False: ember has no sparse layouts."),
    is_quantized=property(lambda self: False, doc="False: ember has no quantized dtypes."),
    names=property(lambda self: (None,) * self.dim(), doc="None per dim: no named dims."),
)


@_method
def has_names(self):
    """False: ember has no named dimensions."""
    return False


def _inplace(name):
    """Tensor.name_: self = name(self, ...) in place; the result's dtype must cast to self's."""
    def method(self, *args, **kwargs):
        fn = getattr(_E, name, None) or getattr(_E.Tensor, name)
        result = fn(self, *args, **kwargs)
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_legacy(result.dtype)} can't be cast to the desired "
                               f"output type {_legacy(self.dtype)}")
        self.copy_(result)
        return self
    method.__name__ = name + "_"
    method.__doc__ = f"In-place {name}."
    return method


_INPLACE = """eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and
    logical_or logical_xor cumprod atan2 arctan2 hypot copysign xlogy logit heaviside sinc gcd lcm
    ldexp mvlgamma renorm addmm addbmm baddbmm addmv addr""".split()


@_method
def float_power_(self, exponent):
    """In-place float_power: self must be float64 (the result's dtype)."""
    if _dname(self.dtype) != "float64":
        raise RuntimeError(f"the base given to float_power_ has dtype {_legacy(self.dtype)} but "
                           "the operation's result requires dtype Double")
    return self.copy_(_E.float_power(self, exponent))


def _removed(name):
    def fn(self, *args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                           f"Please use the `torch.linalg.{name}` function instead.")
    fn.__name__ = name
    fn.__doc__ = f"Removed in PyTorch 1.9 (raises, as PyTorch 1.13's): torch.linalg.{name}."
    return fn


for _n in ("eig", "lstsq", "solve"):
    _method(_removed(_n))


@_method
def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) for every element, with tensor broadcast to self's
    shape (CPU tensors, Python numbers in and out, as PyTorch's)."""
    other = tensor.expand(self.shape)
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(),
                                             other.reshape(-1).tolist())]
    return self.copy_(_E.tensor(values, dtype=self.dtype).reshape(self.shape))


@_method
def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self's shape."""
    xs, ys = x.expand(self.shape), y.expand(self.shape)
    values = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(),
                                                   xs.reshape(-1).tolist(),
                                                   ys.reshape(-1).tolist())]
    return self.copy_(_E.tensor(values, dtype=self.dtype).reshape(self.shape))


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


_PROPS.update(
    volatile=property(_volatile, doc="False, with PyTorch's warning (volatile was removed)."),
    is_nested=property(lambda self: False, doc="False: ember has no nested tensors."),
    is_sparse_csr=property(lambda self: False, doc="False: ember's tensors are dense."),
    is_vulkan=property(lambda self: False, doc="False: ember has no Vulkan backend."))


@_method
def storage(self):
    """The TypedStorage under self: its storage's elements from the first (torch's storage())."""
    return _E.storage.tensor_storage(self)


@_method
def untyped_storage(self):
    """The UntypedStorage under self: its storage's bytes."""
    return _E.storage.tensor_untyped_storage(self)


@_method
def storage_type(self):
    """The legacy storage class of self's dtype (ember.FloatStorage for float32)."""
    return _E.storage.tensor_storage_type(self)


@_method
def as_subclass(self, cls):
    """self as an instance of cls, a Tensor subclass: the same memory and autograd history."""
    if not (isinstance(cls, type) and issubclass(cls, _E.Tensor)):
        raise RuntimeError("Creating a Tensor subclass from a class that does not inherit from "
                           "Tensor is not possible. Make sure your class inherits from Tensor.")
    obj = _E.Tensor.__new__(cls)
    _E.Tensor.__init__(obj, self)
    return obj


@_method
def reinforce(self, reward):
    """Removed from PyTorch (raises, as 1.13): use ember.distributions."""
    raise RuntimeError("reinforce() was removed.\nUse ember.distributions instead.")


def _no_device(kind):
    def fn(self, device=None, non_blocking=False, memory_format=None):
        raise RuntimeError(f"ember is not linked with support for {kind} devices")
    fn.__name__ = kind
    fn.__doc__ = f"Refuses: ember has no {kind} devices (as PyTorch built without them)."
    return fn


for _n in ("xpu", "ipu"):
    _method(_no_device(_n))


@_both
def dequantize(input):
    """input in float32: ember has no quantized tensors, and PyTorch's dequantize of a tensor
    that is not quantized is its float32 conversion (no copy when it is float32)."""
    if isinstance(input, (list, tuple)):
        raise NotImplementedError("dequantize of a list of tensors takes quantized tensors, "
                                  "which ember does not have")
    return input.to(_E.float32)


@_method
def module_load(self, other, assign=False):
    """How load_state_dict turns a state-dict value into this parameter's or buffer's
    replacement: other detached (assign) or self after copying other in, detached."""
    return other.detach() if assign else self.copy_(other).detach()


_PROPS.update({f"is_{kind}": property(lambda self: False,
                                        doc=f"False: ember has no {kind} devices.")
               for kind in ("xla", "maia", "mtia")})
_method(_no_device("mtia"))
