"""ember.backends.mkldnn: oneDNN, which ember uses for CPU convolutions when it is installed.

`allow_winograd` (ember's own switch, on by default) lets float32 3x3 stride-1 convolutions of 64
or more channels use Winograd's algorithm, about twice as fast with about 8 times direct
convolution's rounding error (2e-6 of the output's magnitude), as cuDNN picks Winograd kernels on
GPUs. Set it to False for direct convolution, as PyTorch's CPU convolutions do."""
import sys
import types

from .. import _C

enabled = True


def is_available():
    """Whether ember's CPU convolutions can use oneDNN."""
    return _C._have_dnnl()


class _Module(types.ModuleType):
    @property
    def allow_winograd(self):
        return _C._allow_winograd()

    @allow_winograd.setter
    def allow_winograd(self, on):
        _C._set_allow_winograd(bool(on))


sys.modules[__name__].__class__ = _Module
