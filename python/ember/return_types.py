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
frexp = collections.namedtuple("frexp", ["mantissa", "exponent"])

# Linear algebra's results, by PyTorch's names.
_FIELDS = {
    "linalg_cholesky_ex": ["L", "info"], "linalg_inv_ex": ["inverse", "info"],
    "linalg_slogdet": ["sign", "logabsdet"], "slogdet": ["sign", "logabsdet"],
    "linalg_solve_ex": ["result", "info"], "linalg_lu_factor": ["LU", "pivots"],
    "linalg_lu_factor_ex": ["LU", "pivots", "info"], "linalg_lu": ["P", "L", "U"],
    "lu_unpack": ["P", "L", "U"], "linalg_qr": ["Q", "R"], "qr": ["Q", "R"],
    "linalg_eigh": ["eigenvalues", "eigenvectors"], "linalg_eig": ["eigenvalues", "eigenvectors"],
    "symeig": ["eigenvalues", "eigenvectors"],
    "linalg_svd": ["U", "S", "Vh"], "svd": ["U", "S", "V"], "linalg_ldl_factor": ["LD", "pivots"],
    "linalg_ldl_factor_ex": ["LD", "pivots", "info"],
    "linalg_lstsq": ["solution", "residuals", "rank", "singular_values"],
    "geqrf": ["a", "tau"], "triangular_solve": ["solution", "cloned_coefficient"],
}
globals().update({name: collections.namedtuple(name, fields) for name, fields in _FIELDS.items()})

# Every named tuple the C++ binding hands out (registered by the package's __init__).
_ALL = _VALUES_INDICES + ["frexp"] + list(_FIELDS)
