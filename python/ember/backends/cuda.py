"""ember.backends.cuda: matmul.allow_tf32 (whether float32 matmuls may use TF32 tensor cores; off
by default, as in PyTorch) and the attention switches of torch.backends.cuda."""
import contextlib
import warnings

from .. import _C
from .._missing import missing


class _Matmul:
    @property
    def allow_tf32(self):
        return _C._cuda.allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, on):
        _C._cuda.set_allow_tf32(bool(on))

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built():
    """Whether ember was built with its CUDA backend."""
    return _C._cuda_built



# --- the attention kernels scaled_dot_product_attention may use (ember's fused kernel is the
# flash-style one; mem_efficient and cudnn have no kernel of their own in ember) ---

def enable_flash_sdp(enabled):
    """Allows (or not) the fused FlashAttention-style kernel."""
    _C._cuda.enable_flash_sdp(bool(enabled))


def flash_sdp_enabled():
    return _C._cuda.flash_sdp_enabled()


def enable_mem_efficient_sdp(enabled):
    _C._cuda.enable_mem_efficient_sdp(bool(enabled))


def mem_efficient_sdp_enabled():
    return _C._cuda.mem_efficient_sdp_enabled()


def enable_math_sdp(enabled):
    """Allows (or not) the math path (softmax(q k^T) v written out)."""
    _C._cuda.enable_math_sdp(bool(enabled))


def math_sdp_enabled():
    return _C._cuda.math_sdp_enabled()


def enable_cudnn_sdp(enabled):
    _C._cuda.enable_cudnn_sdp(bool(enabled))


def cudnn_sdp_enabled():
    return _C._cuda.cudnn_sdp_enabled()


_reduced_precision_math_sdp = [True]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Whether the math path may reduce in 16 bits (ember's reduces in float32 either way)."""
    _reduced_precision_math_sdp[0] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _reduced_precision_math_sdp[0]


_SWITCHES = {"flash": (flash_sdp_enabled, enable_flash_sdp),
             "mem_efficient": (mem_efficient_sdp_enabled, enable_mem_efficient_sdp),
             "math": (math_sdp_enabled, enable_math_sdp),
             "cudnn": (cudnn_sdp_enabled, enable_cudnn_sdp)}


@contextlib.contextmanager
def _sdp_switches(**enabled):
    """Sets the named switches for the block, restoring all of them after."""
    saved = {name: get() for name, (get, _) in _SWITCHES.items()}
    try:
        for name, on in enabled.items():
            _SWITCHES[name][1](on)
        yield
    finally:
        for name, on in saved.items():
            _SWITCHES[name][1](on)


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """The attention switches for a with-block (deprecated in PyTorch 2 for
    torch.nn.attention.sdpa_kernel)."""
    warnings.warn("torch.backends.cuda.sdp_kernel() is deprecated. In the future, this context "
                  "manager will be removed. Please see torch.nn.attention.sdpa_kernel() for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=2)
    return _sdp_switches(flash=enable_flash, math=enable_math,
                         mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)


__getattr__ = missing(__name__)
