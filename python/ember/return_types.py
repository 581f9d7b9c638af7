"""The named tuples some functions return: x.max(dim) gives (values, indices), as torch's."""
import collections

_VALUES_INDICES = ["max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin",
                   "aminmax"]
max = collections.namedtuple("max", ["values", "indices"])
min = collections.namedtuple("min", ["values", "indices"])
sort = collections.namedtuple("sort", ["values", "indices"])
topk = collections.namedtuple("topk", ["values", "indices"])
kthvalue = collections.namedtuple("kthvalue", ["values", "indices"])
median = collections.namedtuple("median", ["values", "indices"])
mode = collections.namedtuple("mode", ["values", "indices"])
cummax = collections.namedtuple("cummax", ["values", "indices"])
cummin = collections.namedtuple("cummin", ["values", "indices"])
aminmax = collections.namedtuple("aminmax", ["min", "max"])
