"""Pickling of ember's C++ objects under every protocol. Protocols 0 and 1 (and a direct
obj.__reduce__()) reduce through copyreg._reduce_ex, which calls the nearest non-Python base's
constructor on the object; pybind11 answers that by throwing from inside CPython, and the process
terminates. Every C++ class is given protocol 2's reduction instead: a new object of the class
and its __getstate__ (py::pickle's, or object's 'cannot pickle' TypeError)."""
import copyreg

from . import _C


def _reduce(self):
    getnewargs = getattr(self, "__getnewargs__", None)
    return copyreg.__newobj__, (type(self),) + (getnewargs() if getnewargs else ()), \
        self.__getstate__()


def _reduce_ex(self, protocol):
    if type(self).__reduce__ is not _reduce:  # the class reduces itself
        return self.__reduce__()
    return _reduce(self)


_base = _C.Tensor.__mro__[-2]  # pybind11_builtins.pybind11_object
_base.__reduce__, _base.__reduce_ex__ = _reduce, _reduce_ex
