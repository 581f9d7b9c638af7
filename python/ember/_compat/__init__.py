"""PyTorch 1.13 names that programs touch and that need no kernel of their own: dtype facts,
memory formats, RNG state, broadcasting helpers, small math and Tensor conveniences, each written
over ember's ops. install(ember) adds each name once: a name ember already has (a C++ op of the
op table, ember/ops/ops.def, or a binding) is an error at import, so that when an op moves down to
C++ its Python version here goes with it.

One module per kind of name, each registering what it defines (with _registry's decorators) as it
is imported: dtypes, formats (layouts and memory formats), settings (global switches), rng (random
state), shapes, reductions, linalg, elementwise, factories, tensor_methods, functional, pooling. They are
imported in that order, the order of registration (a later registration of a name replaces an
earlier one); a new module goes into _MODULES too, so that install() gives it the ember module."""
import sys

from . import _registry, dtypes, formats, settings, rng, shapes, reductions, linalg, elementwise
from . import factories, tensor_methods, functional, pooling
from ._registry import _AUTOGRAD, _F, _PROPS, _TENSOR, _TORCH
from .elementwise import _histogram
from .formats import _ORIGINAL, _WRAPPED
from .functional import _FROM_F, _FROM_TENSOR, _torch_norms
from .rng import _cuda_misc, _cuda_seed_functions, _make_random_module
from .tensor_methods import _INPLACE, _inplace

_E = None  # the ember module, set by install()

# Each module's _E is set by install(); the order is the order of registration.
_MODULES = (_registry, dtypes, formats, settings, rng, shapes, reductions, linalg, elementwise,
            factories, tensor_methods, functional, pooling)

# Every name the modules define stays an attribute of ember._compat, as when it was one file (a
# pickled memory format names ember._compat._memory_format_by_name, for instance).
for _module in _MODULES:
    globals().update({k: v for k, v in vars(_module).items()
                      if not k.startswith("__") and k != "_E"})
del _module


# ================================================================================================
# install
# ================================================================================================


def _add(target, name, value):
    if hasattr(target, name):
        where = getattr(target, "__name__", type(target).__name__)
        raise RuntimeError(f"ember._compat: {where}.{name} is already defined (by the op table or "
                           f"a binding); a name is registered once: remove one of the two")
    setattr(target, name, value)


def install(ember):
    """Adds the names the modules register to ember and its Tensor, nn.functional, cuda, autograd,
    return_types."""
    global _E
    _E = ember
    for module in _MODULES:
        module._E = ember
    T = ember.Tensor
    for name, wrap in _WRAPPED:
        original = getattr(T, name)
        if not getattr(original, "_ember_compat", False):
            _ORIGINAL[name] = original
            method = wrap(original)
            method._ember_compat = True
            setattr(T, name, method)
    for name, value in _TORCH.items():
        _add(ember, name, value)
    for name, fn in _TENSOR.items():
        _add(T, name, fn)
    for name, prop in _PROPS.items():
        _add(T, name, prop)
    for name in _INPLACE:
        _add(T, name + "_", _inplace(name))
    F = ember.nn.functional
    for name, fn in _F.items():
        _add(F, name, fn)
    for name in _FROM_F:
        if hasattr(F, name):
            _add(ember, name, getattr(F, name))
    for name in _FROM_TENSOR:
        if hasattr(T, name):
            _add(ember, name, getattr(T, name))
    # What this build has (torch.has_*): LAPACK (OpenBLAS's) and an FFT (pocketfft) always.
    flags = dict(has_cuda=ember.cuda.is_built(), has_mkl=False, has_lapack=True,
                 has_spectral=True, has_openmp=ember.backends.openmp.is_available(),
                 has_cudnn=ember.backends.cudnn.is_available(),
                 has_mkldnn=ember.backends.mkldnn.is_available(), has_mps=False)
    for name, value in flags.items():
        _add(ember, name, value)
    for name, fn in _torch_norms().items():
        _add(ember, name, fn)
    _add(ember, "random", _make_random_module())
    sys.modules.setdefault("ember.random", ember.random)
    for name, fn in {**_cuda_seed_functions(), **_cuda_misc()}.items():
        _add(ember.cuda, name, fn)
    for name, value in _AUTOGRAD.items():
        _add(ember.autograd, name, value)
    _add(ember.return_types, "histogram", _histogram)
