"""ember.nn.utils: torch.nn.utils' names - gradient clipping, parameters as one vector, weight and
spectral normalisation (hooks and parametrizations), conv/linear + batch-norm fusion,
functional_call, skip_init, memory formats and packed sequences (rnn). The submodules mirror
PyTorch's files; how they reparametrize ember's C++ layers is Note [Reparametrizing ember's C++
layers] in _native.py."""
from . import rnn  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm,
                        clip_grads_with_norm_)
from .weight_norm import weight_norm, remove_weight_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import spectral_norm, remove_spectral_norm
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .memory_format import (convert_conv2d_weight_memory_format,
                            convert_conv3d_weight_memory_format)
from . import parametrize, parametrizations  # noqa: F401
from .init import skip_init
from . import stateless  # noqa: F401
from ..._missing import missing

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "parameters_to_vector",
           "vector_to_parameters", "remove_spectral_norm", "remove_weight_norm", "skip_init",
           "spectral_norm", "weight_norm", "parametrize", "parametrizations", "stateless", "rnn"]

__getattr__ = missing(__name__)
