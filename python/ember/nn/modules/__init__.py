"""torch.nn.modules: every layer, under PyTorch's module paths (torch.nn.modules.linear.Linear
and friends)."""
from .module import Module, install as _install
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .pooling import (MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d)
from .activation import (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus,
                         Hardtanh, Hardswish, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink,
                         Threshold, PReLU, GLU, Sigmoid, Tanh, Softmax, LogSoftmax, Softmin,
                         Softmax2d)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout
from .normalization import (LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d, BatchNorm1d, BatchNorm2d,
                            SyncBatchNorm)
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .sparse import Embedding
from .misc import (Flatten, Unflatten, PixelShuffle, PixelUnshuffle, Upsample,
                   UpsamplingNearest2d, UpsamplingBilinear2d, ZeroPad2d, ConstantPad1d,
                   ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
                   ReplicationPad2d, CircularPad1d, CircularPad2d)
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder,
                          TransformerEncoderLayer, TransformerDecoderLayer)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss,
                   SmoothL1Loss, HuberLoss, KLDivLoss, MarginRankingLoss, HingeEmbeddingLoss,
                   SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
                   TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss)
from . import (activation, attention, batchnorm, container, conv, dropout, flatten, instancenorm, linear,  # noqa: F401
               loss, module, normalization, padding, pixelshuffle, pooling, rnn, sparse,
               transformer, upsampling)

# F's one Python-written entry (it is built from modules' pieces).
from .. import functional as _functional  # noqa: E402
_functional.multi_head_attention_forward = attention.multi_head_attention_forward

_install()
