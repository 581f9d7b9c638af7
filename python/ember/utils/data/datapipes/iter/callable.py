"""IterDataPipes that apply a function to each item: Mapper (.map) and Collator (.collate)."""
from collections.abc import Sized

from ..._utils.collate import default_collate
from .._common import _check_unpickable_fn, validate_input_col
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """fn applied to each item of datapipe; with input_col, to those columns of it (an index
    or key, or a list of them passed as arguments), the result replacing the first of them, or
    written to output_col (-1 appends it)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col
        validate_input_col(fn, input_col)

    def _apply_fn(self, data):
        if self.input_col is None and self.output_col is None:
            return self.fn(data)
        if self.input_col is None:
            res = self.fn(data)
        elif isinstance(self.input_col, (list, tuple)):
            res = self.fn(*(data[col] for col in self.input_col))
        else:
            res = self.fn(data[self.input_col])
        # A tuple is rebuilt as a list to be written into, and given back as a tuple.
        t_flag = isinstance(data, tuple)
        if t_flag:
            data = list(data)
        if self.output_col is None:
            if isinstance(self.input_col, (list, tuple)):
                data[self.input_col[0]] = res
                for idx in sorted(self.input_col[1:], reverse=True):
                    del data[idx]
            else:
                data[self.input_col] = res
        elif self.output_col == -1:
            data.append(res)
        else:
            data[self.output_col] = res
        return tuple(data) if t_flag else data

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise TypeError("{} instance doesn't have valid length".format(type(self).__name__))


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """collate_fn (or conversion, default_collate by default) applied to each item, a batch:
    .batch(n).collate() gives batches as a DataLoader does. PyTorch's dict conversion collates
    DataFrame columns, which ember does not have."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is not None:
            super().__init__(datapipe, fn=collate_fn)
        elif callable(conversion):
            super().__init__(datapipe, fn=conversion)
        else:
            raise NotImplementedError("Collator: a dict `conversion` collates DataFrame "
                                      "columns, and ember has no DataFrame DataPipes")
