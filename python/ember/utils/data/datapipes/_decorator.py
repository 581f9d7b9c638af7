"""The decorators of torch.utils.data's DataPipes: functional_datapipe (registers a DataPipe
class as a method of every DataPipe of its kind), non_deterministic and
guaranteed_datapipes_determinism (refuse non-deterministic DataPipes while determinism is asked
for), argument_validation, runtime_validation and runtime_validation_disabled."""
import inspect
from functools import wraps

from .datapipe import IterDataPipe, MapDataPipe

__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]


class functional_datapipe:
    """@functional_datapipe("name") on a DataPipe class: dp.name(*args) is Class(dp, *args)
    for every IterDataPipe (or MapDataPipe) dp."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, non_deterministic) or \
                isinstance(getattr(cls, "__self__", None), non_deterministic):
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """While it is alive (or inside `with`), making a non_deterministic DataPipe is a
    TypeError."""

    def __init__(self):
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic (@non_deterministic), or as
    non-deterministic for the arguments where deterministic_fn(*args) says so
    (@non_deterministic(fn))."""
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                ", but {} is found".format(arg.__name__))
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError("{} can not be decorated by non_deterministic".format(arg))

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise TypeError("{} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off "
                                "determinism for this DataPipe if that is acceptable for your "
                                "application".format(self.cls.__name__))
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError("Only `IterDataPipe` can be decorated, but {} is found"
                            .format(args[0].__name__))
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required "
                            "to return a boolean value, but {} is found".format(type(res)))
        if _determinism and res:
            raise TypeError("{} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism "
                            "for this DataPipe if that is acceptable for your application"
                            .format(self.cls.__name__))
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Checks each call's arguments against f's signature (a TypeError for ones that do not
    bind). PyTorch also checks arguments annotated with a typed DataPipe class against the
    DataPipe's type, but its typed DataPipe classes are switched off (IterDataPipe[int] is a
    plain generic alias), so no argument is checked that way there either."""
    signature = inspect.signature(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return f(*args, **kwargs)

    return wrapper


_runtime_validation_enabled = True


class runtime_validation_disabled:
    """While it is alive (or inside `with`), runtime_validation checks nothing."""

    def __init__(self):
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f):
    """Decorates a DataPipe's __iter__ so that each item is checked against the DataPipe's
    `type` (a RuntimeError for an item not of it). As in PyTorch, whose typed DataPipes are
    switched off, a DataPipe has no `type` unless it sets one, and the check then raises
    AttributeError unless runtime_validation_disabled is in force."""
    if f.__name__ != "__iter__":
        raise TypeError("Can not decorate function {} with 'runtime_validation'"
                        .format(f.__name__))

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
        else:
            for d in f(self):
                if not self.type.issubtype_of_instance(d):
                    raise RuntimeError("Expected an instance as subtype of {}, but found {}({})"
                                       .format(self.type, d, type(d)))
                yield d

    return wrapper
