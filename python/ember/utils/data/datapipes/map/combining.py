"""MapDataPipes that combine MapDataPipes: Concater (.concat, one after the other) and Zipper
(.zip, tuples of the items at one index)."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["ConcaterMapDataPipe", "ZipperMapDataPipe"]


def _check_inputs(datapipes):
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(isinstance(dp, Sized) for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """The items of each MapDataPipe, indexed one DataPipe after the other."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes
        self.length = -1

    def __getitem__(self, index):
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError("Index {} is out of range.".format(index))

    def __len__(self):
        if self.length == -1:
            self.length = sum(len(dp) for dp in self.datapipes)
        return self.length


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    """The tuple of each MapDataPipe's item at an index; as long as the shortest."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes
        self.length = -1

    def __getitem__(self, index):
        res = []
        for dp in self.datapipes:
            try:
                res.append(dp[index])
            except IndexError:
                raise IndexError(f"Index {index} is out of range for one of the input "
                                 f"MapDataPipes {dp}.")
        return tuple(res)

    def __len__(self):
        if self.length == -1:
            self.length = min(len(dp) for dp in self.datapipes)
        return self.length
