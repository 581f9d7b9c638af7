"""IterDataPipes that combine DataPipes: Concater (.concat), Zipper (.zip), Multiplexer (.mux,
one item from each in turn), and the ones that split one DataPipe into several: Forker (.fork,
copies) and Demultiplexer (.demux, by a classifier). The children of a split share a buffer
held by a hidden container DataPipe."""
import warnings
from collections import deque
from collections.abc import Sized

from .._common import _check_unpickable_fn
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["ConcaterIterDataPipe", "DemultiplexerIterDataPipe", "ForkerIterDataPipe",
           "MultiplexerIterDataPipe", "ZipperIterDataPipe"]


def _no_length(dp):
    return TypeError("{} instance doesn't have valid length".format(type(dp).__name__))


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The items of each DataPipe, one DataPipe after the other."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes
        self.length = None

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        if self.length is None:
            self.length = sum(len(dp) for dp in self.datapipes) \
                if all(isinstance(dp, Sized) for dp in self.datapipes) else -1
        if self.length == -1:
            raise _no_length(self)
        return self.length


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """num_instances DataPipes that each yield every item of datapipe; items one child has read
    and another has not are buffered (at most buffer_size of them; -1: no limit)."""

    def __new__(cls, datapipe, num_instances, buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instaces` larger than 0, but {num_instances} is "
                             f"found")
        if num_instances == 1:
            return datapipe
        container = _ForkerIterDataPipe(datapipe, num_instances, buffer_size)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _ForkerIterDataPipe(IterDataPipe):
    """The container of fork's children: one iterator of the source, a buffer between the
    slowest and the fastest child, a read pointer per child."""

    def __init__(self, datapipe, num_instances, buffer_size=1000):
        self.main_datapipe = datapipe
        self._datapipe_iterator = None
        self.num_instances = num_instances
        self.buffer = deque()
        self.buffer_size = buffer_size
        if self.buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `fork`, "
                          "please be aware of OOM at random places", UserWarning)
        self.child_pointers = [0] * num_instances  # the index each child reads next
        self.slowest_ptr = 0
        self.leading_ptr = 0
        self.end_ptr = None  # the index past the last item, once known

    def __len__(self):
        return len(self.main_datapipe)

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None:
            self._datapipe_iterator = iter(self.main_datapipe)
        while self.end_ptr is None or self.child_pointers[instance_id] + 1 < self.end_ptr:
            self.child_pointers[instance_id] += 1
            if self.buffer and self.child_pointers[instance_id] <= self.leading_ptr:
                idx = self.child_pointers[instance_id] - self.slowest_ptr - 1
                return_val = self.buffer[idx]
            else:  # this child leads: one more item from the source
                self.leading_ptr = self.child_pointers[instance_id]
                try:
                    return_val = next(self._datapipe_iterator)
                    self.buffer.append(return_val)
                except StopIteration:
                    self.end_ptr = self.leading_ptr
                    continue
            if self.child_pointers[instance_id] == self.slowest_ptr + 1:
                new_min = min(self.child_pointers)
                if self.slowest_ptr < new_min:
                    self.slowest_ptr = new_min
                    self.buffer.popleft()
            if self.buffer_size >= 0 and self.leading_ptr > self.buffer_size + self.slowest_ptr:
                raise BufferError("ForkerIterDataPipe buffer overflow," +
                                  f"buffer size {self.buffer_size} is insufficient.")
            yield return_val
        if all(p + 1 == self.end_ptr for p in self.child_pointers):
            self._datapipe_iterator = None

    def is_every_instance_exhausted(self):
        return self.end_ptr is not None and \
            all(self.end_ptr == ptr or self.end_ptr - 1 == ptr for ptr in self.child_pointers)

    def reset(self):
        self._datapipe_iterator = iter(self.main_datapipe)
        self.buffer = deque()
        self.child_pointers = [0] * self.num_instances
        self.slowest_ptr = 0
        self.leading_ptr = 0
        self.end_ptr = None


class _ChildDataPipe(IterDataPipe):
    """One output of fork or demux: reads its share through the container (main_datapipe).
    A new iterator of any child restarts all of them (see _hook_iterator)."""
    _is_child_datapipe = True

    def __init__(self, main_datapipe, instance_id):
        required_attrs = ["get_next_element_by_instance", "is_every_instance_exhausted", "reset"]
        required_ops = [getattr(main_datapipe, attr) for attr in required_attrs]
        if any(not callable(op) for op in required_ops):
            raise NotImplementedError(f"Main Datapipe must have methods {required_attrs} "
                                      f"implemented.")
        self.main_datapipe = main_datapipe
        self.instance_id = instance_id

    def __iter__(self):
        return self.main_datapipe.get_next_element_by_instance(self.instance_id)

    def __len__(self):
        return len(self.main_datapipe)

    def _set_main_datapipe_valid_iterator_id(self):
        if self.main_datapipe._valid_iterator_id is None:
            self.main_datapipe._valid_iterator_id = 0
        elif self.main_datapipe._valid_iterator_id == self._valid_iterator_id:
            self.main_datapipe._valid_iterator_id += 1
            if not self.main_datapipe.is_every_instance_exhausted():
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. "
                              "We are resetting the buffer and each child DataPipe will read "
                              "from the start again.", UserWarning)
            self.main_datapipe.reset()
        self._valid_iterator_id = self.main_datapipe._valid_iterator_id
        return self._valid_iterator_id

    def _check_valid_iterator_id(self, iterator_id):
        return iterator_id == self._valid_iterator_id and \
            iterator_id == self.main_datapipe._valid_iterator_id


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """num_instances DataPipes; item x goes to child classifier_fn(x) (None drops it with
    drop_none). Items for a child that is not being read are buffered (at most buffer_size)."""

    def __new__(cls, datapipe, num_instances, classifier_fn, drop_none=False,
                buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instaces` larger than 0, but {num_instances} is "
                             f"found")
        _check_unpickable_fn(classifier_fn)
        container = _DemultiplexerIterDataPipe(datapipe, num_instances, classifier_fn,
                                               drop_none, buffer_size)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


class _DemultiplexerIterDataPipe(IterDataPipe):
    """The container of demux's children: one iterator of the source and a buffer per child."""

    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size):
        self.main_datapipe = datapipe
        self._datapipe_iterator = None
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if self.buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `demux`, "
                          "please be aware of OOM at random places", UserWarning)
        self.current_buffer_usage = 0
        self.child_buffers = [deque() for _ in range(num_instances)]
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none
        self.main_datapipe_exhausted = False

    def _find_next(self, instance_id):
        while True:
            if self.main_datapipe_exhausted:
                raise StopIteration
            if self._datapipe_iterator is None:
                raise ValueError("_datapipe_iterator has not been set, likely because this "
                                 "private method is called directly without invoking "
                                 "get_next_element_by_instance() first.")
            value = next(self._datapipe_iterator)
            classification = self.classifier_fn(value)
            if classification is None and self.drop_none:
                continue
            if classification is None or classification >= self.num_instances or \
                    classification < 0:
                raise ValueError("Output of the classification fn should be between 0 and "
                                 f"{self.num_instances - 1}. {classification} is returned.")
            if classification == instance_id:
                return value
            self.child_buffers[classification].append(value)
            self.current_buffer_usage += 1
            if self.buffer_size >= 0 and self.current_buffer_usage > self.buffer_size:
                raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size "
                                  f"{self.buffer_size} is insufficient.")

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None and not self.main_datapipe_exhausted:
            self._datapipe_iterator = iter(self.main_datapipe)
        stop = False
        while not stop:
            if self.child_buffers[instance_id]:
                self.current_buffer_usage -= 1
                yield self.child_buffers[instance_id].popleft()
            else:
                try:
                    yield self._find_next(instance_id)
                except StopIteration:
                    stop = True
                    self.main_datapipe_exhausted = True
                    self._datapipe_iterator = None

    def is_every_instance_exhausted(self):
        return self.main_datapipe_exhausted and \
            all(not child_buffer for child_buffer in self.child_buffers)

    def reset(self):
        self._datapipe_iterator = None
        self.current_buffer_usage = 0
        self.child_buffers = [deque() for _ in range(self.num_instances)]
        self.main_datapipe_exhausted = False


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One item from each DataPipe in turn, until the shortest one ends."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes
        self.length = None
        self.buffer = []  # a round's items, yielded only once every DataPipe has given one

    def __iter__(self):
        iterators = [iter(x) for x in self.datapipes]
        while len(iterators):
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self):
        if self.length is None:
            self.length = min(len(dp) for dp in self.datapipes) * len(self.datapipes) \
                if all(isinstance(dp, Sized) for dp in self.datapipes) else -1
        if self.length == -1:
            raise _no_length(self)
        return self.length

    def reset(self):
        self.buffer = []


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of one item from each DataPipe, until the shortest one ends."""

    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` "
                            "for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes
        self.length = None

    def __iter__(self):
        iterators = [iter(datapipe) for datapipe in self.datapipes]
        try:
            yield from zip(*iterators)
        finally:
            # As PyTorch: the longer DataPipes are read to their end (PyTorch closes the file
            # streams among their items).
            for iterator in iterators:
                try:
                    for _ in iterator:
                        pass
                except RuntimeError:  # invalidated by the single-iterator rule
                    pass

    def __len__(self):
        if self.length is None:
            self.length = min(len(dp) for dp in self.datapipes) \
                if all(isinstance(dp, Sized) for dp in self.datapipes) else -1
        if self.length == -1:
            raise _no_length(self)
        return self.length
