"""IterDataPipe and MapDataPipe, torch.utils.data's composable datasets (PyTorch's datapipes):
an IterDataPipe is an IterableDataset, a MapDataPipe a map-style Dataset, and each DataPipe
class registered with @functional_datapipe("name") becomes a method of every DataPipe of its
kind (dp.map(fn).filter(pred).batch(8) builds Mapper, Filter and Batcher over dp). DataChunk is
the list a batching DataPipe yields."""
import functools
from typing import Generic, TypeVar

from ..dataset import Dataset, IterableDataset
from ._hook_iterator import hook_iterator

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _HookedDataPipe:
    """What IterDataPipe and MapDataPipe share: the functional-name table (one per kind),
    __getattr__ that makes its entries methods, and PyTorch's class-wide pickling and repr
    hooks. `_kind` is the base class that owns the table and the hooks."""
    _kind = None

    def __getattr__(self, attribute_name):
        kind = type(self)._kind
        if attribute_name in kind.functions:
            return functools.partial(kind.functions[attribute_name], self)
        raise AttributeError("'{0}' object has no attribute '{1}".format(
            self.__class__.__name__, attribute_name))

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    def __getstate__(self):
        state = self.__dict__
        if self._kind.getstate_hook is not None:
            return self._kind.getstate_hook(state)
        return state

    def __reduce_ex__(self, *args, **kwargs):
        if self._kind.reduce_ex_hook is not None:
            try:
                return self._kind.reduce_ex_hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        if cls._kind.getstate_hook is not None and hook_fn is not None:
            raise Exception("Attempt to override existing getstate_hook")
        cls._kind.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        if cls._kind.reduce_ex_hook is not None and hook_fn is not None:
            raise Exception("Attempt to override existing reduce_ex_hook")
        cls._kind.reduce_ex_hook = hook_fn

    def __repr__(self):
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return str(self.__class__.__qualname__)

    def __str__(self):
        if self.str_hook is not None:
            return self.str_hook(self)
        return str(self.__class__.__qualname__)


class IterDataPipe(_HookedDataPipe, IterableDataset, Generic[T_co]):
    """An iterable DataPipe: define __iter__ (and __len__ when the length is known). One
    iterator at a time: starting a new one calls reset() and invalidates the earlier ones."""
    functions = {}
    reduce_ex_hook = None
    getstate_hook = None
    str_hook = None
    repr_hook = None
    _valid_iterator_id = None
    _number_of_samples_yielded = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__iter__" in cls.__dict__:
            hook_iterator(cls)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception("Unable to add DataPipe function name {} as it is already taken"
                            .format(function_name))

        def class_function(cls, enable_df_api_tracing, source_dp, *args, **kwargs):
            return cls(source_dp, *args, **kwargs)

        # enable_df_api_tracing is kept for PyTorch's signature: ember has no DataFrame pipes.
        function = functools.partial(class_function, cls_to_register, enable_df_api_tracing)
        cls.functions[function_name] = function

    def reset(self):
        """Called when a new iterator starts: a DataPipe with state between epochs (a buffer,
        a seed) clears it here."""


IterDataPipe._kind = IterDataPipe


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames (PyTorch's DataFrame API; ember has no DataFrame pipes)."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(_HookedDataPipe, Dataset, Generic[T_co]):
    """A map-style DataPipe: define __getitem__ and __len__."""
    functions = {}
    reduce_ex_hook = None
    getstate_hook = None
    str_hook = None
    repr_hook = None

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in cls.functions:
            raise Exception("Unable to add DataPipe function name {} as it is already taken"
                            .format(function_name))

        def class_function(cls, source_dp, *args, **kwargs):
            return cls(source_dp, *args, **kwargs)

        function = functools.partial(class_function, cls_to_register)
        cls.functions[function_name] = function


MapDataPipe._kind = MapDataPipe


class DataChunk(list, Generic[T]):
    """A batch from a batching DataPipe: a list that also keeps the items it was made from."""

    def __init__(self, items):
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        for i in super().__iter__():
            yield i

    def raw_iterator(self):
        for i in self.items:
            yield i
