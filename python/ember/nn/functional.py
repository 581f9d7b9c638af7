"""ember.nn.functional: activations, convolution, pooling, normalisation, dropout and losses."""
from .. import _C

_f = _C._functional
relu, sigmoid, tanh, softmax, log_softmax = _f.relu, _f.sigmoid, _f.tanh, _f.softmax, _f.log_softmax
dropout, linear, conv2d, max_pool2d, avg_pool2d = (_f.dropout, _f.linear, _f.conv2d, _f.max_pool2d,
                                                   _f.avg_pool2d)
batch_norm, cross_entropy, nll_loss, mse_loss = (_f.batch_norm, _f.cross_entropy, _f.nll_loss,
                                                 _f.mse_loss)
one_hot, embedding = _f.one_hot, _f.embedding
adaptive_avg_pool2d, interpolate = _f.adaptive_avg_pool2d, _f.interpolate
