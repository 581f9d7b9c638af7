"""Filter (.filter): the items of a DataPipe for which a predicate holds."""
import warnings

from .._common import _check_unpickable_fn, validate_input_col
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["FilterIterDataPipe"]


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """The items of datapipe for which filter_fn (of the input_col columns, when given) is True;
    an empty list that is filtered in is dropped (drop_empty_batches, deprecated)."""

    def __init__(self, datapipe, filter_fn, drop_empty_batches=None, input_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        if drop_empty_batches is None:
            drop_empty_batches = True
        else:
            warnings.warn(f"The argument `drop_empty_batches` of `{type(self).__name__}()` is "
                          "deprecated since 1.12 and will be removed in 1.14.\nSee "
                          "https://github.com/pytorch/data/issues/163 for details.",
                          FutureWarning)
        self.drop_empty_batches = drop_empty_batches
        self.input_col = input_col
        validate_input_col(filter_fn, input_col)

    def _apply_filter_fn(self, data):
        if self.input_col is None:
            return self.filter_fn(data)
        if isinstance(self.input_col, (list, tuple)):
            return self.filter_fn(*(data[col] for col in self.input_col))
        return self.filter_fn(data[self.input_col])

    def __iter__(self):
        for data in self.datapipe:
            filtered = self._returnIfTrue(data)
            if self._isNonEmpty(filtered):
                yield filtered

    def _returnIfTrue(self, data):
        condition = self._apply_filter_fn(data)
        if not isinstance(condition, bool):
            raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, "
                             "got", type(condition))
        if condition:
            return data

    def _isNonEmpty(self, data):
        return data is not None and \
            not (isinstance(data, list) and len(data) == 0 and self.drop_empty_batches)
