"""torch.nn.utils.fusion: folding an eval-mode batch norm into the convolution or linear layer
before it (one layer, same outputs). PyTorch 2.x's versions (the result keeps the layer's dtypes
and its parameters' requires_grad; 1.13 gives the same numbers). A batch norm's eps is read from
the module (ember's C++ batch norms keep it as a constructor argument)."""
import copy

from ... import _C
from ..parameter import Parameter
from ._native import layer_option

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of conv computing bn(conv(x)) (both in eval mode); transpose=True for a
    ConvTranspose, whose weight has the output channels in dim 1."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused_conv = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var,
        layer_option(bn, "eps"), bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of a convolution followed by a batch norm with running
    mean bn_rm, variance bn_rv, eps, and affine weight bn_w and bias bn_b (None: 1 and 0)."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = _C._ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _C._ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _C._ops.zeros_like(bn_rm)
    bn_var_rsqrt = _C._ops.rsqrt(bn_rv + bn_eps)

    if transpose:
        shape = [1, -1] + [1] * (len(conv_w.shape) - 2)
    else:
        shape = [-1, 1] + [1] * (len(conv_w.shape) - 2)

    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return (Parameter(fused_conv_w, conv_w.requires_grad),
            Parameter(fused_conv_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear computing bn(linear(x)) (both in eval mode)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused_linear = copy.deepcopy(linear)
    # The batch norm's features must broadcast against the linear layer's outputs, so that the
    # fused weight and bias keep their shapes.
    num_features = layer_option(bn, "num_features")
    assert linear.out_features == num_features or num_features == 1, \
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    assert bn.running_mean is not None and bn.running_var is not None
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var,
        layer_option(bn, "eps"), bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of a linear layer followed by a batch norm."""
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = _C._ops.zeros_like(bn_rm)
    bn_scale = bn_w * _C._ops.rsqrt(bn_rv + bn_eps)

    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
