"""Mapper (.map) of a MapDataPipe: fn applied to the item at each index."""
from .._common import _check_unpickable_fn
from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["MapperMapDataPipe", "default_fn"]


def default_fn(data):
    return data


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    """fn(datapipe[index]) at each index."""

    def __init__(self, datapipe, fn=default_fn):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn

    def __len__(self):
        return len(self.datapipe)

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])
