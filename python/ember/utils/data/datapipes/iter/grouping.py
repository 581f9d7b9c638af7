"""IterDataPipes that group items: Batcher (.batch), UnBatcher (.unbatch), Grouper (.groupby)
and ShardingFilter (.sharding_filter, every n-th item for one of n workers)."""
from collections import defaultdict
from collections.abc import Sized

from .._common import _check_unpickable_fn
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "ShardingFilterIterDataPipe",
           "UnBatcherIterDataPipe"]


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """The items i with i % num_of_instances == instance_id (apply_sharding sets both; one
    instance, all items, until then)."""

    def __init__(self, source_datapipe):
        self.source_datapipe = source_datapipe
        self.num_of_instances = 1
        self.instance_id = 0

    def is_shardable(self):
        return True

    def apply_sharding(self, num_of_instances, instance_id):
        self.num_of_instances = num_of_instances
        self.instance_id = instance_id

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        if isinstance(self.source_datapipe, Sized):
            return len(self.source_datapipe) // self.num_of_instances + \
                (1 if (self.instance_id < len(self.source_datapipe) % self.num_of_instances)
                 else 0)
        raise TypeError("{} instance doesn't have valid length".format(type(self).__name__))


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Lists (wrapper_class, DataChunk by default) of batch_size consecutive items; the last
    shorter one too unless drop_last."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, "Batch size is required to be larger than 0!"
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.length = None
        self.wrapper_class = wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if len(batch) > 0 and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        if self.length is not None:
            return self.length
        if isinstance(self.datapipe, Sized):
            if self.drop_last:
                self.length = len(self.datapipe) // self.batch_size
            else:
                self.length = (len(self.datapipe) + self.batch_size - 1) // self.batch_size
            return self.length
        raise TypeError("{} instance doesn't have valid length".format(type(self).__name__))


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """The items of the lists datapipe yields, unbatch_level levels down (-1: all the way)."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, unbatch_level=self.unbatch_level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, unbatch_level=-1)
            else:
                yield element
        elif unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=unbatch_level - 1)
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             f"DataPipe")


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe):
    """DataChunks of items with the same group_key_fn(item): a group is yielded when it reaches
    group_size, the largest one when buffer_size items are held, and the rest at the end
    (groups under guaranteed_group_size are an error, or dropped with drop_remaining)."""

    def __init__(self, datapipe, group_key_fn, *, buffer_size=10000, group_size=None,
                 guaranteed_group_size=None, drop_remaining=False):
        _check_unpickable_fn(group_key_fn)
        self.datapipe = datapipe
        self.group_key_fn = group_key_fn
        self.max_buffer_size = buffer_size
        self.buffer_elements = defaultdict(list)
        self.curr_buffer_size = 0
        self.group_size = group_size
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            assert 0 < group_size <= buffer_size
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            assert group_size is not None and 0 < guaranteed_group_size <= group_size
            self.guaranteed_group_size = guaranteed_group_size
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _remove_biggest_key(self):
        biggest_key, biggest_size, result_to_yield = None, 0, None
        for findkey in self.buffer_elements.keys():
            if len(self.buffer_elements[findkey]) > biggest_size:
                biggest_size = len(self.buffer_elements[findkey])
                biggest_key = findkey
        if self.guaranteed_group_size is not None and \
                biggest_size < self.guaranteed_group_size and not self.drop_remaining:
            raise RuntimeError("Failed to group items", str(self.buffer_elements[biggest_key]))
        if self.guaranteed_group_size is None or biggest_size >= self.guaranteed_group_size:
            result_to_yield = self.buffer_elements[biggest_key]
        self.curr_buffer_size -= biggest_size
        del self.buffer_elements[biggest_key]
        return result_to_yield

    def __iter__(self):
        for x in self.datapipe:
            key = self.group_key_fn(x)
            self.buffer_elements[key].append(x)
            self.curr_buffer_size += 1
            if self.group_size is not None and self.group_size == len(self.buffer_elements[key]):
                yield self.wrapper_class(self.buffer_elements[key])
                self.curr_buffer_size -= len(self.buffer_elements[key])
                del self.buffer_elements[key]
            if self.curr_buffer_size == self.max_buffer_size:
                result_to_yield = self._remove_biggest_key()
                if result_to_yield is not None:
                    yield self.wrapper_class(result_to_yield)
        for key in tuple(self.buffer_elements.keys()):
            res = self.buffer_elements.pop(key)
            self.curr_buffer_size -= len(res)
            yield self.wrapper_class(res)

    def reset(self):
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __getstate__(self):
        state = (self.datapipe, self.group_key_fn, self.max_buffer_size, self.group_size,
                 self.guaranteed_group_size, self.drop_remaining, self.wrapper_class,
                 self._valid_iterator_id, self._number_of_samples_yielded)
        if IterDataPipe.getstate_hook is not None:
            return IterDataPipe.getstate_hook(state)
        return state

    def __setstate__(self, state):
        (self.datapipe, self.group_key_fn, self.max_buffer_size, self.group_size,
         self.guaranteed_group_size, self.drop_remaining, self.wrapper_class,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)
