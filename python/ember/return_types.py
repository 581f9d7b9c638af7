"""The named tuples some functions return: x.max(dim) gives (values, indices), as torch's."""
import collections

max = collections.namedtuple("max", ["values", "indices"])
min = collections.namedtuple("min", ["values", "indices"])
