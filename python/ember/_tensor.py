"""The parts of ember.Tensor written in Python: copying and pickling, format(), the legacy type
names (Tensor.type(), ember.FloatTensor and friends), as torch/_tensor.py has them."""

from . import _C

Tensor = _C.Tensor

# The legacy tensor type names: (name, dtype). torch.FloatTensor is float32 on the CPU,
# torch.cuda.FloatTensor on a GPU.
_LEGACY = [("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
           ("BFloat16Tensor", "bfloat16"), ("LongTensor", "int64"), ("IntTensor", "int32"),
           ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"),
           ("BoolTensor", "bool")]
_LEGACY_BY_DTYPE = {dtype: name for name, dtype in _LEGACY}


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _rebuild(data, dtype_name, shape, requires_grad, is_parameter):
    """Inverse of Tensor.__reduce_ex__ (plain pickle; multiprocessing shares memory instead)."""
    if dtype_name == "bfloat16":
        t = _C.from_numpy(data).to(_C.bfloat16)
    else:
        t = _C.from_numpy(data)
    t = t.reshape(shape)
    if is_parameter:
        from .nn.parameter import Parameter
        return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_ex(self, protocol):
    if self.requires_grad and not self.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize a non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries. If you "
                           "just want to transfer the data, call detach() on the tensor before "
                           "serializing")
    from .nn.parameter import Parameter
    t = self.detach().cpu()
    name = _dtype_name(t.dtype)
    data = (t.to(_C.float32) if name == "bfloat16" else t).contiguous().numpy().copy()
    return _rebuild, (data, name, tuple(self.shape), self.requires_grad,
                      isinstance(self, Parameter))


def _deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                           "deepcopy protocol at the moment. If you were attempting to deepcopy a "
                           "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                           "https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    from .nn.parameter import Parameter
    data = self.detach().clone()
    new = Parameter(data, self.requires_grad) if isinstance(self, Parameter) else data
    if not isinstance(self, Parameter) and self.requires_grad:
        new.requires_grad_(True)
    if self.grad is not None:
        new.grad = _deepcopy(self.grad, memo)
    extra = getattr(self, "__dict__", None)
    if extra:
        import copy
        for k, v in extra.items():
            setattr(new, k, copy.deepcopy(v, memo))
    memo[id(self)] = new
    return new


def _format(self, spec):
    # format(loss, '.4f') of a 0-dim tensor formats its value, as PyTorch does.
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _legacy_name(t):
    name = _LEGACY_BY_DTYPE[_dtype_name(t.dtype)]
    return ("torch.cuda." if t.is_cuda else "torch.") + name


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type() is the legacy name ('torch.FloatTensor'); x.type(dtype) converts, where dtype is
    a dtype, a legacy type or its name."""
    if dtype is None:
        return _legacy_name(self)
    if isinstance(dtype, str):
        cuda = dtype.startswith("torch.cuda.")
        short = dtype.rpartition(".")[2]
        match = [d for n, d in _LEGACY if n == short]
        if not match:
            raise ValueError(f"invalid type: '{dtype}'")
        target = getattr(_C, match[0])
        device = "cuda" if cuda else ("cpu" if self.is_cuda else None)
        out = self.to(target, non_blocking=non_blocking)
        return out.to(device) if device else out
    if isinstance(dtype, type) and issubclass(dtype, _LegacyType):  # x.type(torch.FloatTensor)
        out = self.to(dtype.dtype, non_blocking=non_blocking)
        return out.to("cuda") if dtype.cuda else (out.cpu() if out.is_cuda else out)
    return self.to(dtype, non_blocking=non_blocking)


class _LegacyMeta(type):
    """isinstance(x, ember.FloatTensor) is True for a float32 CPU tensor, as in PyTorch."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and _dtype_name(obj.dtype) == _dtype_name(cls.dtype)
                and obj.is_cuda == cls.cuda)


class _LegacyType(metaclass=_LegacyMeta):
    dtype = None
    cuda = False

    def __new__(cls, *args, device=None):
        """FloatTensor(2, 3) is uninitialised of that size; FloatTensor([1, 2]) holds the data."""
        dev = "cuda" if cls.cuda else (device or "cpu")
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(dev, cls.dtype)
            return _C.tensor(data, dtype=cls.dtype, device=dev)
        return _C._ops.empty(*args, dtype=cls.dtype, device=dev)


def _legacy_types(cuda):
    out = {}
    for name, dtype in _LEGACY:
        out[name] = _LegacyMeta(name, (_LegacyType,), {"dtype": getattr(_C, dtype), "cuda": cuda,
                                                       "__module__": "ember.cuda" if cuda
                                                       else "ember"})
    return out


CPU_TYPES = _legacy_types(False)
CUDA_TYPES = _legacy_types(True)


def install():
    """Adds the Python-written methods to ember.Tensor (once, at import)."""
    Tensor.__reduce_ex__ = _reduce_ex
    Tensor.__deepcopy__ = _deepcopy
    Tensor.__format__ = _format
    Tensor.type = _type
    Tensor.__array_priority__ = 1000  # NumPy defers to Tensor's operators (array + tensor)


