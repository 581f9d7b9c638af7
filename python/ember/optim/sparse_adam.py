"""torch.optim.SparseAdam: Adam's lazy variant for sparse gradients (an nn.Embedding with
sparse=True). ember has no sparse tensors, so every gradient is dense, and PyTorch's SparseAdam
refuses a dense gradient: step() raises PyTorch's RuntimeError as soon as a parameter has a
gradient. The class exists so that code constructing it (and its argument checks) behaves as in
PyTorch; there is no sparse update to run."""
from .optimizer import Optimizer, _check, _step

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        # SparseAdam's own checks (lr and eps must be positive, not just non-negative).
        _check(0.0 < lr, "learning rate", lr)
        _check(0.0 < eps, "epsilon value", eps)
        _check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
        _check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])
        params = list(params)
        sparse_params = []
        for index, param in enumerate(params):
            if isinstance(param, dict):
                for d_index, d_param in enumerate(param.get("params", [])):
                    if d_param.is_sparse:
                        sparse_params.append([index, d_index])
            elif param.is_sparse:
                sparse_params.append(index)
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    @_step
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                # Every ember gradient is dense (no sparse layout).
                if p.grad is not None:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
