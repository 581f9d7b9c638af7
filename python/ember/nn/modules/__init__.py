"""torch.nn.modules: every layer, under PyTorch's module paths (torch.nn.modules.linear.Linear
and friends)."""
from .module import Module, install as _install
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear, LazyLinear
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
                      LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d, FractionalMaxPool3d)
from .activation import (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus,
                         Hardtanh, Hardswish, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink,
                         Threshold, PReLU, GLU, Sigmoid, Tanh, Softmax, LogSoftmax, Softmin,
                         Softmax2d, Hardshrink, Softshrink, RReLU)
from .dropout import (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
                      FeatureAlphaDropout)
from .normalization import (LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm, CrossMapLRN2d,
                            InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, BatchNorm1d,
                            BatchNorm2d, BatchNorm3d, SyncBatchNorm, LazyBatchNorm1d,
                            LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
                            LazyInstanceNorm2d, LazyInstanceNorm3d)
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .sparse import Embedding, EmbeddingBag
from .misc import (Flatten, Unflatten, PixelShuffle, PixelUnshuffle, Upsample,
                   UpsamplingNearest2d, UpsamplingBilinear2d, ZeroPad2d, ConstantPad1d,
                   ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
                   ReplicationPad2d, CircularPad1d, CircularPad2d, ZeroPad1d, ZeroPad3d,
                   ConstantPad3d, ReflectionPad3d, ReplicationPad3d, CircularPad3d,
                   ChannelShuffle, Fold, Unfold, CosineSimilarity, PairwiseDistance)
from .attention import MultiheadAttention
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder,
                          TransformerEncoderLayer, TransformerDecoderLayer)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss,
                   SmoothL1Loss, HuberLoss, KLDivLoss, MarginRankingLoss, HingeEmbeddingLoss,
                   SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
                   TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss, MultiMarginLoss,
                   MultiLabelMarginLoss, TripletMarginWithDistanceLoss, NLLLoss2d, CTCLoss)
from . import (activation, adaptive, attention, batchnorm, channelshuffle, container, conv,  # noqa: F401
               distance, dropout, flatten, fold, instancenorm, linear, loss, module,
               normalization, padding, pixelshuffle, pooling, rnn, sparse, transformer,
               upsampling)

# F's one Python-written entry (it is built from modules' pieces).
from .. import functional as _functional  # noqa: E402
_functional.multi_head_attention_forward = attention.multi_head_attention_forward

_install()
