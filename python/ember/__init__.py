"""ember: GPUs made easy and fast, with PyTorch's names, over ember's C++ core.

    import ember
    x = ember.randn(64, 1, 28, 28, device="cuda" if ember.cuda.is_available() else "cpu")

Every computation runs in C++ (ember._C); this package gives its parts PyTorch's names.
"""
from . import _C
from . import _pybind_pickle  # noqa: F401  (before anything is pickled)
from ._C import (Tensor, device, dtype, float32, float, float64, double, float16, half, bfloat16,
                 int64, long, int32, int, int16, short, int8, uint8, bool, complex64, cfloat,
                 complex128, cdouble, complex32, chalf, manual_seed, initial_seed, set_num_threads,
                 get_num_threads, is_grad_enabled, tensor, as_tensor, is_tensor, numel,
                 from_numpy, from_dlpack, Generator, default_generator)
from ._size import Size
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                       is_inference_mode_enabled)
from .serialization import save, load
from .storage import TypedStorage, UntypedStorage, LEGACY_CLASSES as _LEGACY_STORAGES
from . import futures  # noqa: E402
from .futures import Future  # noqa: E402
globals().update(_LEGACY_STORAGES)  # FloatStorage, LongStorage, ... (torch.FloatStorage)
from . import _tensor
from ._tensor import CPU_TYPES as _CPU_TYPES
from ._missing import missing as _missing

_tensor.install()
globals().update(_CPU_TYPES)  # ember.FloatTensor, ember.LongTensor, ...

__version__ = _C.__version__

# The functions of the op list (ember/ops/ops.def, bound by python/src/op_table.h): ember.sum(input=x,
# dim=1) and x.sum(dim=1) are one declaration. Composites written in Python are _compat's.
from ._C._ops import *  # noqa: E402,F401,F403

from . import (autograd, amp, cpu, cuda, nn, optim, utils, multiprocessing, distributed,  # noqa: E402
               backends, models, accelerator, distributions, special, masked,
               linalg, fft, testing)
from .amp import autocast, is_autocast_enabled, GradScaler  # noqa: E402 (torch.GradScaler: 2.3)
from .cuda import OutOfMemoryError  # noqa: E402 (torch.OutOfMemoryError: 2.5)
from .accelerator import Stream, Event  # noqa: E402 (torch.Stream, torch.Event: 2.2)
from ._compile import compile  # noqa: E402 (torch.compile: 2.0)
from . import compiler  # noqa: E402,F401
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402 (torch.vmap: torch.func's)
newaxis = None  # torch.newaxis, NumPy's spelling of None in an index
import ember.cuda.amp  # noqa: E402,F401
from . import return_types  # noqa: E402
from ._ops import ops  # noqa: E402

# The Python-made objects the C++ binding hands out, registered once here (see python_object).
_C._register("Size", Size)
_C._register("Parameter", nn.Parameter)
for _name in return_types._ALL:
    _C._register("return_types." + _name, getattr(return_types, _name))



def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D tensors (given one by one or as one list); indexing "ij" or
    "xy"."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return _C._ops._meshgrid(list(tensors), indexing=indexing)


def einsum(equation, *operands):
    """Sums of products over the subscripts of `equation` (torch.einsum); the operands may also
    come as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C._ops._einsum(equation, list(operands))


from . import _compat  # noqa: E402
_compat.install(__import__(__name__))

__all__ = [n for n in dir() if not n.startswith("_")]
__getattr__ = _missing(__name__)
