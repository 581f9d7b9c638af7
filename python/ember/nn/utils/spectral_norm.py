"""torch.nn.utils.spectral_norm (https://arxiv.org/abs/1802.05957), the hook-based API: the
parameter `weight` moves to `weight_orig`, buffers `weight_u` and `weight_v` hold the power
iteration's vectors, and a forward pre-hook recomputes `module.weight = weight_orig / sigma` before
every call (one power iteration per call in training mode).

ember: as weight_norm.py (a plain `weight` attribute, and for a C++ layer the emptied slot filled
for the call). PyTorch also registers state-dict hooks that record a version in the state dict's
metadata and convert checkpoints saved before PyTorch 1.0's format; ember's modules have no
state-dict hooks, so neither is done (a current state dict - weight_orig, weight_u, weight_v -
loads as in PyTorch)."""
from ... import _C
from ...autograd import no_grad
from ..functional import normalize
from ..parameter import Parameter, UninitializedParameter
from . import _native

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of spectral_norm. Invariant before and after each forward:
    u = normalize(W @ v) (not at initialisation)."""
    _version = 1

    def __init__(self, name='weight', n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError('Expected n_power_iterations to be positive, but '
                             'got n_power_iterations={}'.format(n_power_iterations))
        self.n_power_iterations = n_power_iterations
        self.eps = eps
        self._fills_slot = False

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            # permute dim to front
            weight_mat = weight_mat.permute(self.dim,
                                            *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration):
        # u and v are updated in place (out=): under DataParallel the replica on the first
        # device shares the buffers' storage, so the update reaches the module. They are cloned
        # after the update, so that a backward through two forwards (a GAN's D(real) - D(fake))
        # does not see the vectors of the first changed by the second.
        weight = getattr(module, self.name + '_orig')
        u = getattr(module, self.name + '_u')
        v = getattr(module, self.name + '_v')
        weight_mat = self.reshape_weight_to_matrix(weight)

        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # Spectral norm of weight equals `u^T W v`, u and v the first left and right
                    # singular vectors, which this power iteration approximates.
                    v = normalize(_C._ops.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = normalize(_C._ops.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                if self.n_power_iterations > 0:
                    contiguous = _native.package().contiguous_format
                    u = u.clone(memory_format=contiguous)
                    v = v.clone(memory_format=contiguous)

        sigma = _C._ops.dot(u, _C._ops.mv(weight_mat, v))
        weight = weight / sigma
        return weight

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        _native.del_plain_attr(module, self.name)
        delattr(module, self.name + '_u')
        delattr(module, self.name + '_v')
        delattr(module, self.name + '_orig')
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        weight = self.compute_weight(module, do_power_iteration=module.training)
        _native.set_plain_attr(module, self.name, weight)
        if self._fills_slot:
            _native.put_in_slot(module, self.name, weight)

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        if _native.find_recompute_hook(module, SpectralNorm, name) is not None:
            raise RuntimeError("Cannot register two spectral_norm hooks on "
                               "the same parameter {}".format(name))

        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        if _native.slot_kind(module, name)[0] != "parameter":
            raise KeyError(name)  # as PyTorch's module._parameters[name]
        weight = getattr(module, name)
        if weight is None:
            raise ValueError(f'`SpectralNorm` cannot be applied as parameter `{name}` is None')
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                'The module passed to `SpectralNorm` can\'t have uninitialized parameters. '
                'Make sure to run the dummy forward before applying spectral normalization')

        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # randomly initialize `u` and `v`
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # `weight` stays an attribute (code such as weight initialisation expects it), a plain
        # tensor, not a parameter.
        _native.set_plain_attr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        fn._fills_slot = _native.register_recompute_hooks(module, fn)
        return fn


def _default_output_dim(module):
    """Which dim of a weight is the output's: 1 for the transposed convolutions, 0 else."""
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Rescales module.<name> by its spectral norm before each forward, the norm estimated by
    n_power_iterations of the power method per call in training mode. dim: the output dim
    (default 0, 1 for ConvTranspose). Returns the module."""
    if dim is None:
        dim = _default_output_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name='weight'):
    """Undoes spectral_norm: module.<name> becomes a parameter with its current (normalised)
    value."""
    hook = _native.pop_recompute_hook(module, SpectralNorm, name)
    if hook is None:
        raise ValueError("spectral_norm of '{}' not found in {}".format(name, module))
    hook.remove(module)
    return module
