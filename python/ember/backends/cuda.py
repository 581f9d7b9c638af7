"""ember.backends.cuda.matmul.allow_tf32: whether float32 matmuls may use TF32 tensor cores
(off by default, as in PyTorch)."""
from .. import _C


class _Matmul:
    @property
    def allow_tf32(self):
        return _C._cuda.allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, on):
        _C._cuda.set_allow_tf32(bool(on))


matmul = _Matmul()
