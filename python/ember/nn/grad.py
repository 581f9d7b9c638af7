"""torch.nn.grad: the gradients of conv1d/2d/3d with respect to the input or the weight, given
the gradient of the output. PyTorch calls convolution_backward; ember composes convolutions,
which keeps the result differentiable in the given tensors (ember's convolution backward is not
itself differentiable): the input's gradient is the transposed convolution of grad_output, the
weight's a convolution of the input by grad_output with batch and channels swapped."""
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _tuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def _conv_input(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    stride, padding, dilation = _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n)
    kernel, out = weight.shape[2:], grad_output.shape[2:]
    # The rows (columns, ...) of the input past the last window get output_padding.
    output_padding = tuple(
        input_size[2 + i] - ((out[i] - 1) * stride[i] - 2 * padding[i] +
                             dilation[i] * (kernel[i] - 1) + 1) for i in range(n))
    transpose = getattr(F, f"conv_transpose{n}d")
    return transpose(grad_output, weight, None, stride, padding, output_padding, groups,
                     dilation)


def _conv_weight(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    stride, padding, dilation = _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n)
    batch, in_channels = input.shape[:2]
    out_channels = grad_output.shape[1]
    in_per_group, out_per_group = in_channels // groups, out_channels // groups
    # grad_weight[o, c, k] = sum over n, l of grad_output[n, o, l] input[n, (g, c), l s + k d],
    # g the group of o: a grouped convolution of the input (batch c, channels (g, n)) by
    # grad_output as the kernel (out-channels (g, o), in-channels n), stride and dilation
    # swapped.
    spatial, out_spatial = tuple(input.shape[2:]), tuple(grad_output.shape[2:])
    rest = tuple(range(3, 3 + n))
    x = input.reshape((batch, groups, in_per_group) + spatial).permute((2, 1, 0) + rest) \
        .reshape((in_per_group, groups * batch) + spatial)
    w = grad_output.reshape((batch, groups, out_per_group) + out_spatial) \
        .permute((1, 2, 0) + rest).reshape((out_channels, batch) + out_spatial)
    conv = getattr(F, f"conv{n}d")
    grad = conv(x, w, None, dilation, padding, stride, groups)  # (C_in / G, C_out, *K')
    grad = grad.transpose(0, 1)
    for i in range(n):  # K' exceeds the kernel by the rows no window reaches
        grad = grad.narrow(2 + i, 0, weight_size[2 + i])
    return grad.contiguous()


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its input, of shape input_size (N, C_in, L)."""
    return _conv_input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its weight, of shape weight_size
    (C_out, C_in / groups, kL)."""
    return _conv_weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its input, of shape input_size (N, C_in, H, W)."""
    return _conv_input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its weight, of shape weight_size
    (C_out, C_in / groups, kH, kW)."""
    return _conv_weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its input, of shape input_size
    (N, C_in, D, H, W)."""
    return _conv_input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its weight, of shape weight_size
    (C_out, C_in / groups, kD, kH, kW)."""
    return _conv_weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
