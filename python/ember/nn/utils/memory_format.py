"""torch.nn.utils.memory_format: putting the convolutions' weights (only) in a memory format such
as channels_last, recursively through a model."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        # contiguous(memory_format) already has the format's strides (PyTorch's further
        # resize_ to the same size and format changes nothing).
        module.weight.data = module.weight.detach().clone().contiguous(
            memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Gives the weight of every nn.Conv2d and nn.ConvTranspose2d in module (module included)
    the memory format (e.g. torch.channels_last); returns the module."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """PyTorch 2.x: the same for nn.Conv3d and nn.ConvTranspose3d (channels_last_3d)."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
