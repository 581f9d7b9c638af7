"""The single-iterator rule of IterDataPipe, as PyTorch's _hook_iterator: every __iter__ a
subclass defines is wrapped so that starting a new iterator calls the DataPipe's reset() and
invalidates the iterators made before it (reading one raises RuntimeError), and an exception
raised inside __iter__ names the DataPipe it came from. (PyTorch also records each step in the
profiler and fast-forwards a restored snapshot; ember does neither.)"""
import functools
import inspect

_FEEDBACK_MSG = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, feel "
                 "free to comment on this issue: https://github.com/pytorch/data/issues/45.")


def _simplify_obj_name(obj):
    return obj.__name__ if inspect.isfunction(obj) else repr(obj)


def _generate_input_args_string(obj):
    """'name=value, ...' for the arguments of obj's constructor that obj keeps as attributes."""
    names = set(inspect.signature(obj.__class__).parameters)
    return ", ".join(f"{name}={_simplify_obj_name(value)}"
                     for name, value in inspect.getmembers(obj) if name in names)


def _generate_iterdatapipe_msg(datapipe):
    return f"{datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})"


def _gen_invalid_iterdatapipe_msg(datapipe):
    return ("This iterator has been invalidated because another iterator has been created "
            f"from the same IterDataPipe: {_generate_iterdatapipe_msg(datapipe)}\n"
            "This may be caused multiple references to the same IterDataPipe. We recommend "
            "using `.fork()` if that is necessary.")


def _check_iterator_valid(datapipe, iterator_id, next_method_exists=False):
    if next_method_exists:
        # A DataPipe that is its own iterator (__iter__ returns self) allows one iterator only.
        if datapipe._valid_iterator_id is not None and datapipe._valid_iterator_id != 0:
            extra_msg = ("\nNote that this exception is raised inside your IterDataPipe's a "
                         "`__next__` method")
            raise RuntimeError(_gen_invalid_iterdatapipe_msg(datapipe) + extra_msg +
                               _FEEDBACK_MSG)
    elif getattr(datapipe, "_is_child_datapipe", False) is True:
        if not datapipe._check_valid_iterator_id(iterator_id):
            raise RuntimeError("This iterator has been invalidated, because a new iterator has "
                               "been created from one of the ChildDataPipes of "
                               f"{_generate_iterdatapipe_msg(datapipe.main_datapipe)}." +
                               _FEEDBACK_MSG)
    elif datapipe._valid_iterator_id != iterator_id:
        raise RuntimeError(_gen_invalid_iterdatapipe_msg(datapipe) + _FEEDBACK_MSG)


def _set_datapipe_valid_iterator_id(datapipe):
    """Makes a new iterator the valid one (resetting the DataPipe) and returns its id."""
    if getattr(datapipe, "_is_child_datapipe", False) is True:
        datapipe._set_main_datapipe_valid_iterator_id()  # resets the main DataPipe when due
    else:
        if datapipe._valid_iterator_id is None:
            datapipe._valid_iterator_id = 0
        else:
            datapipe._valid_iterator_id += 1
        datapipe.reset()
    return datapipe._valid_iterator_id


def _name_datapipe_in(e, datapipe):
    """Appends 'This exception is thrown by __iter__ of <DataPipe>(<args>)' to e's message."""
    msg = "thrown by __iter__ of"
    single_iterator_msg = "single iterator per IterDataPipe constraint"
    full_msg = f"{msg} {datapipe.__class__.__name__}({_generate_input_args_string(datapipe)})"
    if len(e.args) == 0 or not isinstance(e.args[0], str):
        e.args = (f"\nThis exception is {full_msg}",)
    elif msg not in e.args[0] and single_iterator_msg not in e.args[0]:
        e.args = (e.args[0] + f"\nThis exception is {full_msg}",) + e.args[1:]


class _IteratorDecorator:
    """The iterator a non-generator __iter__ returned, checked for validity at each step."""

    def __init__(self, iterator, source_dp, iterator_id, has_next_method):
        self.iterator = iterator
        self.source_dp = source_dp
        self.iterator_id = iterator_id
        self.self_and_has_next_method = self.iterator is self.source_dp and has_next_method

    def __iter__(self):
        return self

    def __next__(self):
        _check_iterator_valid(self.source_dp, self.iterator_id)
        result = next(self.iterator)
        if not self.self_and_has_next_method:
            self.source_dp._number_of_samples_yielded += 1
        return result

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def hook_iterator(cls):
    """Wraps the __iter__ (and __next__) that cls defines itself."""
    func = cls.__dict__["__iter__"]
    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def wrap_generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            datapipe = args[0]
            # Set at the first next(), not at iter(): an iterator never read invalidates none.
            iterator_id = _set_datapipe_valid_iterator_id(datapipe)
            try:
                response = gen.send(None)
                while True:
                    datapipe._number_of_samples_yielded += 1
                    request = yield response
                    _check_iterator_valid(datapipe, iterator_id)
                    response = gen.send(request)
            except StopIteration:
                return
            except Exception as e:
                if hasattr(e.args, "__len__"):
                    _name_datapipe_in(e, datapipe)
                raise

        cls.__iter__ = wrap_generator
        return
    has_next = "__next__" in cls.__dict__
    if has_next:
        next_func = cls.__dict__["__next__"]

        @functools.wraps(next_func)
        def wrap_next(*args, **kwargs):
            result = next_func(*args, **kwargs)
            args[0]._number_of_samples_yielded += 1
            return result

        cls.__next__ = wrap_next

    @functools.wraps(func)
    def wrap_iter(*args, **kwargs):
        iter_ret = func(*args, **kwargs)
        datapipe = args[0]
        iterator_id = _set_datapipe_valid_iterator_id(datapipe)
        return _IteratorDecorator(iter_ret, datapipe, iterator_id, has_next)

    cls.__iter__ = wrap_iter
