"""torch.nn.utils.convert_parameters: a model's parameters as one vector and back."""
from ... import _C

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one vector (all on one device)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return _C._ops.cat(vec)


def vector_to_parameters(vec, parameters):
    """Gives each parameter, in order, the next slice of vec as its data (as PyTorch, the
    parameters then share vec's memory)."""
    if not isinstance(vec, _C.Tensor):
        raise TypeError('expected torch.Tensor, but got: {}'.format(type(vec).__name__))
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param, old_param_device):
    """The device index of the first parameter (-1 for the CPU); a later parameter elsewhere is
    an error."""
    if old_param_device is None:
        old_param_device = param.get_device() if param.is_cuda else -1
    else:
        warn = False
        if param.is_cuda:
            warn = (param.get_device() != old_param_device)
        else:
            warn = (old_param_device != -1)
        if warn:
            raise TypeError('Found two parameters on different devices, '
                            'this is currently not supported.')
    return old_param_device
