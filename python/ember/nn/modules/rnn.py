"""Recurrent modules: RNN, LSTM, GRU and their cells, with torch.nn's arguments, parameter names
(weight_ih_l0, bias_hh_l1_reverse, ...), initialisation and outputs. Each layer runs as ember's
fused recurrent op (one autograd node per layer and direction; ember/ops/rnn.h); a PackedSequence
input runs with its lengths and comes back packed."""
import math
import numbers

from ... import _C
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be a positive integer")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than or equal to 1")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size != 0 and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size  # h's features
        kw = {"device": device, "dtype": dtype or _C.float32}
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(2 if bidirectional else 1):
                suffix = "_reverse" if d == 1 else ""
                layer_in = input_size if layer == 0 else real_hidden * (2 if bidirectional else 1)
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate, layer_in), (gate, real_hidden)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate,), (gate,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for n, s in zip(names, shapes):
                    setattr(self, n, Parameter(_C._ops.empty(s, **kw)))
                self._flat_weights_names += names
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        per = (4 if self.bias else 2) + (1 if self.proj_size > 0 else 0)
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def flatten_parameters(self):
        """A no-op: ember's recurrent op reads the parameters where they are."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _run(self, input, hx, cx):
        lengths = None
        packed = isinstance(input, PackedSequence)
        if packed:
            # Run in the packed (sorted) order; the given states are in the batch's own order.
            sorted_input = PackedSequence(input.data, input.batch_sizes, None, None)
            from ..utils.rnn import pad_packed_sequence
            input_t, lengths = pad_packed_sequence(sorted_input, batch_first=self.batch_first)
            lengths_t = lengths
            if input.sorted_indices is not None:
                if hx is not None:
                    hx = hx.index_select(-2, input.sorted_indices)
                if cx is not None:
                    cx = cx.index_select(-2, input.sorted_indices)
        else:
            input_t, lengths_t = input, None
            if input.dim() not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D instead")
        out, h, c = _C._F._recurrent(input_t, hx, cx, self._flat_weights, self.bias, self.mode,
                                     self.num_layers, self.bidirectional, self.batch_first,
                                     self.dropout, self.training, lengths_t, self.proj_size)
        if packed:
            from ..utils.rnn import pack_padded_sequence
            out = pack_padded_sequence(out, lengths, batch_first=self.batch_first,
                                       enforce_sorted=True)
            out = PackedSequence(out.data, out.batch_sizes, input.sorted_indices,
                                 input.unsorted_indices)
            if input.unsorted_indices is not None:
                h = h.index_select(-2, input.unsorted_indices)
                c = c.index_select(-2, input.unsorted_indices)
        return out, h, c

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """The Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or ReLU)."""

    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input, hx=None):
        out, h, _ = self._run(input, hx, None)
        return out, h


class LSTM(RNNBase):
    """Long short-term memory: returns output, (h_n, c_n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        h0, c0 = hx if hx is not None else (None, None)
        out, h, c = self._run(input, h0, c0)
        return out, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit: returns output, h_n."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        out, h, _ = self._run(input, hx, None)
        return out, h


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = {"device": device, "dtype": dtype or _C.float32}
        self.weight_ih = Parameter(_C._ops.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(_C._ops.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(_C._ops.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_C._ops.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        return s

    def _check(self, input):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self._check(input)
        if hx is None:
            hx = _C._ops.zeros(*input.shape[:-1], self.hidden_size, dtype=input.dtype,
                               device=input.device)
        fn = _C._ops.rnn_tanh_cell if self.nonlinearity == "tanh" else _C._ops.rnn_relu_cell
        return fn(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        self._check(input)
        if hx is None:
            z = _C._ops.zeros(*input.shape[:-1], self.hidden_size, dtype=input.dtype,
                              device=input.device)
            hx = (z, z)
        return _C._ops.lstm_cell(input, list(hx), self.weight_ih, self.weight_hh, self.bias_ih,
                               self.bias_hh)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        self._check(input)
        if hx is None:
            hx = _C._ops.zeros(*input.shape[:-1], self.hidden_size, dtype=input.dtype,
                               device=input.device)
        return _C._ops.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                              self.bias_hh)
