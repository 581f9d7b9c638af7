"""ember.TypedStorage and UntypedStorage (torch.storage's): the memory under tensors, as a flat
array of elements or of bytes. A storage here is a 1-D tensor over the whole of a tensor's
memory, from its first byte, so that reading and writing a storage reads and writes every
tensor that shares it. Tensor.storage() and untyped_storage() return them; the legacy classes
(FloatStorage, LongStorage, ...) are TypedStorages of one dtype."""
import ember

from . import _C
from .serialization import _STORAGES

__all__ = ["TypedStorage", "UntypedStorage"]


class _Storage:
    """What both kinds share: a flat tensor `_t` over the memory."""

    is_sparse = False

    @property
    def device(self):
        return self._t.device

    @property
    def is_cuda(self):
        return self._t.is_cuda

    def size(self):
        return self._t.numel()

    def __len__(self):
        return self._t.numel()

    def nbytes(self):
        return self._t.numel() * self._t.element_size()

    def data_ptr(self):
        return self._t.data_ptr()

    def tolist(self):
        return self._t.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, index):
        if isinstance(index, slice):
            if not isinstance(self, UntypedStorage):
                raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
            return self._wrap(self._t[index])
        return self._t[index].item()

    def __setitem__(self, index, value):
        self._t[index] = value

    def fill_(self, value):
        self._t.fill_(value)
        return self

    def copy_(self, source, non_blocking=False):
        self._t.copy_(source._t)
        return self

    def clone(self):
        return self._wrap(self._t.clone())

    def cpu(self):
        return self._wrap(self._t.cpu())

    def cuda(self, device=None):
        return self._wrap(self._t.cuda(device))

    def is_shared(self):
        return self._t.is_shared()

    def share_memory_(self):
        self._t.share_memory_()
        return self

    def is_pinned(self):
        return False

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist()) or " "
        return f"{body}\n[{self._type_name()} of size {len(self)}]"


class UntypedStorage(_Storage):
    """The bytes under tensors (torch.UntypedStorage): UntypedStorage(nbytes),
    UntypedStorage([byte, ...]), or x.untyped_storage()."""

    def __init__(self, *args, device=None, _tensor=None):
        if _tensor is not None:
            self._t = _tensor
        elif not args:
            self._t = ember.empty(0, dtype=ember.uint8, device=device)
        elif isinstance(args[0], int):
            self._t = ember.empty(args[0], dtype=ember.uint8, device=device)
        else:
            self._t = ember.tensor(list(args[0]), dtype=ember.uint8, device=device)

    def _wrap(self, t):
        return UntypedStorage(_tensor=t)

    def _type_name(self):
        return f"ember.storage.UntypedStorage(device={self.device})"

    def element_size(self):
        return 1

    def type(self):
        return "ember.storage.UntypedStorage"


class TypedStorage(_Storage):
    """The elements under tensors (torch.TypedStorage): TypedStorage(size, dtype=...),
    TypedStorage([values], dtype=...), TypedStorage(wrap_storage=untyped, dtype=...), or
    x.storage(). The legacy classes make TypedStorages of their dtype: FloatStorage(3),
    LongStorage([1, 2])."""

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _tensor=None):
        dtype = dtype or ember.get_default_dtype()
        if _tensor is not None:
            self._t = _tensor
        elif wrap_storage is not None:
            self._t = wrap_storage._t.view(dtype)
        elif not args:
            self._t = ember.empty(0, dtype=dtype, device=device)
        elif isinstance(args[0], int):
            self._t = ember.empty(args[0], dtype=dtype, device=device)
        else:
            self._t = ember.tensor(list(args[0]), dtype=dtype, device=device)

    @property
    def dtype(self):
        return self._t.dtype

    def _wrap(self, t):
        return TypedStorage(_tensor=t)

    def _type_name(self):
        return f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device})"

    def element_size(self):
        return self._t.element_size()

    def untyped(self):
        """The same memory as bytes."""
        return UntypedStorage(_tensor=self._t.view(ember.uint8))

    @property
    def _untyped_storage(self):
        return self.untyped()

    def type(self):
        return _legacy_name(self._t.dtype)


# PyTorch's class name of each dtype's storage: the table torch.save's files are written with.
_LEGACY = {dtype: name for dtype, (name, _) in _STORAGES.items()}


def _legacy_name(dtype):
    return "ember." + _LEGACY[str(dtype).rpartition(".")[2]]


def _legacy_class(dtype_name, class_name):
    dtype = getattr(ember, dtype_name)

    def __new__(cls, *args, device=None, wrap_storage=None, _tensor=None):
        return TypedStorage(*args, dtype=dtype, device=device, wrap_storage=wrap_storage,
                            _tensor=_tensor)
    cls = type(class_name, (TypedStorage,), {
        "__new__": __new__, "dtype": dtype,
        "__doc__": f"Makes a TypedStorage of {dtype_name} (torch.{class_name})."})
    cls.__module__ = "ember"
    return cls


LEGACY_CLASSES = {name: _legacy_class(d, name) for d, name in _LEGACY.items()}


def tensor_storage(tensor):
    """Tensor.storage(): the elements under tensor, from its storage's first one."""
    return TypedStorage(_tensor=tensor._storage_view(tensor.dtype))


def tensor_untyped_storage(tensor):
    """Tensor.untyped_storage(): the bytes under tensor."""
    return UntypedStorage(_tensor=tensor._storage_view(ember.uint8))


def tensor_storage_type(tensor):
    """Tensor.storage_type(): the legacy storage class of tensor's dtype."""
    return LEGACY_CLASSES[_LEGACY[str(tensor.dtype).rpartition(".")[2]]]


del _C
