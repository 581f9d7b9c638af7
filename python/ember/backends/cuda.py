"""ember.backends.cuda: matmul.allow_tf32 (whether float32 matmuls may use TF32 tensor cores; off
by default, as in PyTorch) and the attention switches of torch.backends.cuda."""
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


__getattr__ = missing(__name__)
