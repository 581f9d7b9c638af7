"""torch.nn.utils.weight_norm (https://arxiv.org/abs/1602.07868), the hook-based API: the
parameter `weight` is replaced by `weight_g` (magnitude) and `weight_v` (direction), and a forward
pre-hook recomputes `module.weight = weight_g * weight_v / ||weight_v||` before every call.
norm_except_dim and _weight_norm are torch's functions of those names (ATen's WeightNorm.cpp).

ember: `module.weight` is a plain attribute as in PyTorch; for one of ember's C++ layers the hook
also puts it in the layer's emptied C++ slot for the call (Note [Reparametrizing ember's C++
layers] in _native.py). The emptied slot keeps its place among the module's parameters, so after
remove_weight_norm `weight` is listed where it was, not last as in PyTorch."""
from ..parameter import Parameter, UninitializedParameter
from . import _native

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim but `dim`, shaped to broadcast against v (dim=-1: the
    norm of the whole tensor, a scalar)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        output_size = (v.size(0),) + (1,) * (v.dim() - 1)
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(output_size)
    if dim == v.dim() - 1:
        output_size = (1,) * (v.dim() - 1) + (v.size(v.dim() - 1),)
        return v.contiguous().view(-1, v.size(v.dim() - 1)).norm(pow, 0).view(output_size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """g * v / ||v||, the norm over every dim but `dim` (torch._weight_norm)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of weight_norm: recomputes module.<name> from <name>_g and
    <name>_v."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim
        self._fills_slot = False

    def compute_weight(self, module):
        g = getattr(module, self.name + '_g')
        v = getattr(module, self.name + '_v')
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        if _native.find_recompute_hook(module, WeightNorm, name) is not None:
            raise RuntimeError("Cannot register two weight_norm hooks on "
                               "the same parameter {}".format(name))
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                'The module passed to `WeightNorm` can\'t have uninitialized parameters. '
                'Make sure to run the dummy forward before applying weight normalization')
        if _native.slot_kind(module, name)[0] != "parameter":
            raise KeyError(name)  # as PyTorch's `del module._parameters[name]`
        # w = g * v / ||v||: g and v replace w among the parameters.
        delattr(module, name)
        module.register_parameter(name + '_g', Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + '_v', Parameter(weight.data))
        _native.set_plain_attr(module, name, fn.compute_weight(module))
        fn._fills_slot = _native.register_recompute_hooks(module, fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        _native.del_plain_attr(module, self.name)
        delattr(module, self.name + '_g')
        delattr(module, self.name + '_v')
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        weight = self.compute_weight(module)
        _native.set_plain_attr(module, self.name, weight)
        if self._fills_slot:
            _native.put_in_slot(module, self.name, weight)


def weight_norm(module, name='weight', dim=0):
    """Replaces module.<name> by <name>_g (magnitude, the norm over every dim but `dim`;
    dim=None: over all) and <name>_v (direction), recomputing the weight before each forward.
    Returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name='weight'):
    """Undoes weight_norm: module.<name> becomes a parameter again, with its current value."""
    hook = _native.pop_recompute_hook(module, WeightNorm, name)
    if hook is None:
        raise ValueError("weight_norm of '{}' not found in {}".format(name, module))
    hook.remove(module)
    return module
