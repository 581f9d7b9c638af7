"""SequenceWrapper: any sequence as a MapDataPipe (a deep copy of it by default)."""
import copy
import warnings

from ..datapipe import MapDataPipe

__all__ = ["SequenceWrapperMapDataPipe"]


class SequenceWrapperMapDataPipe(MapDataPipe):
    """sequence[index] at each index, from a deep copy made once (deepcopy=True)."""

    def __init__(self, sequence, deepcopy=True):
        if deepcopy:
            try:
                self.sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, "
                              "please be aware of in-place modification would affect source "
                              "data")
                self.sequence = sequence
        else:
            self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)
