"""IterableWrapper: any iterable as an IterDataPipe (the usual start of a pipeline)."""
import copy
import warnings

from ..datapipe import IterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """The items of iterable, from a deep copy of it made at each new iterator (deepcopy=True)
    so that changes to the items do not reach the source."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source_data = self.iterable
        if self.deepcopy:
            try:
                source_data = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn("The input iterable can not be deepcopied, "
                              "please be aware of in-place modification would affect source "
                              "data.")
        yield from source_data

    def __len__(self):
        return len(self.iterable)
