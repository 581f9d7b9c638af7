"""torch.nn.attention (PyTorch 2.2+): SDPBackend and sdpa_kernel, the with-block that limits
scaled_dot_product_attention to some kernels. ember has two: the FlashAttention-style fused
kernel (FLASH_ATTENTION) and the math path (MATH); EFFICIENT_ATTENTION and CUDNN_ATTENTION name
kernels ember does not have, so a block that allows only those cannot run attention."""
import contextlib
import enum

from ...backends import cuda as _switches

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The kernels of scaled_dot_product_attention, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH_OF = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
              SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
              SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention uses only `backends` (one SDPBackend or a
    list); the previous choice comes back after. set_priority (the order to try them in) is
    accepted: ember prefers its fused kernel whenever it is allowed."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    chosen = set(backends)
    with _switches._sdp_switches(**{name: backend in chosen
                                    for backend, name in _SWITCH_OF.items()}):
        yield {}


def _cur_sdpa_kernel_backends():
    """The backends allowed now."""
    return [backend for backend, name in _SWITCH_OF.items()
            if getattr(_switches, f"{name}_sdp_enabled")()]
