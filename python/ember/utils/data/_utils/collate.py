"""default_collate and default_convert, as torch.utils.data._utils.collate (programs import them
from here; torch.utils.data and its dataloader module export them too): how a DataLoader turns a
list of samples into a batch."""
import collections.abc

from ...._C import Tensor, float64, from_numpy, tensor
from ...._C._ops import stack

__all__ = ["default_collate", "default_convert"]


def default_collate(batch):
    """A list of samples -> one batch, as torch.utils.data.default_collate: tensors are stacked
    (NumPy arrays become tensors first), numbers become a 1-D tensor (float64 for floats, as in
    PyTorch), strings stay a list, and tuples, lists and dicts are collated field by field (a
    tuple's fields come back as a list, a namedtuple's as the namedtuple, as in PyTorch)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if type(first).__module__ == "numpy" and hasattr(first, "shape"):
        if first.shape == ():  # a NumPy scalar
            return tensor([x.item() for x in batch])
        return stack([from_numpy(x) for x in batch])
    if isinstance(first, bool):
        return tensor(batch)
    if isinstance(first, float):
        return tensor(batch, dtype=float64)
    if isinstance(first, int):
        return tensor(batch)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if len(set(map(len, batch))) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]  # tuples too, as PyTorch
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                    f"lists; found {type(first)}")


def default_convert(data):
    """NumPy arrays (and arrays nested in lists, tuples and dicts) as tensors; the rest as is."""
    if type(data).__module__ == "numpy" and hasattr(data, "shape"):
        return from_numpy(data) if data.shape != () else tensor(data.item())
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(v) for v in data]
    return data
