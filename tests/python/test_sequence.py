"""Sequence layers against PyTorch 1.13 with the same weights (copied through state_dict, whose keys
must match): RNN/LSTM/GRU and their cells, packed sequences, scaled_dot_product_attention (fused
and math paths, masks, causal, dropout), MultiheadAttention and the Transformer layers; outputs
and gradients."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember import nn


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def err(a, b):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    return float(np.abs(a - b.detach().numpy()).max()) if a.size else 0.0


def same_weights(em, tm):
    """Loads tm's state dict into em; the key lists must be equal, in order."""
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})


# --- recurrent layers ---

@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_recurrent_layers_match_torch(mode, bidirectional, batch_first):
    torch.manual_seed(1)
    kw = dict(num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    tm = getattr(torch.nn, mode)(5, 7, **kw)
    em = getattr(nn, mode)(5, 7, **kw)
    same_weights(em, tm)
    T, N = 6, 3
    x = torch.randn((N, T, 5) if batch_first else (T, N, 5), requires_grad=True)
    ex = E(x, True)
    dirs = 2 if bidirectional else 1
    h0 = torch.randn(2 * dirs, N, 7)
    state = (h0, torch.randn(2 * dirs, N, 7)) if mode == "LSTM" else h0
    estate = tuple(E(s) for s in state) if mode == "LSTM" else E(state)
    for args, eargs in [((x,), (ex,)), ((x, state), (ex, estate))]:
        to, th = tm(*args)
        eo, eh = em(*eargs)
        assert err(eo, to) < 1e-5
        for a, b in zip(eh if mode == "LSTM" else (eh,), th if mode == "LSTM" else (th,)):
            assert err(a, b) < 1e-5
    loss_t = to.pow(2).sum() + (th[0] if mode == "LSTM" else th).sum()
    loss_e = eo.pow(2).sum() + (eh[0] if mode == "LSTM" else eh).sum()
    loss_t.backward()
    loss_e.backward()
    assert err(ex.grad, x.grad) < 1e-4
    for (name, ep), tp in zip(em.named_parameters(), tm.parameters()):
        assert err(ep.grad, tp.grad) < 1e-4, name


def packed_lstm_matches(tm, em, x, lengths):
    """The same padded batch packed (unsorted lengths) through both LSTMs: padded outputs, the
    final states and the lengths pad_packed_sequence gives back agree."""
    tp = torch.nn.utils.rnn.pack_padded_sequence(x.detach(), lengths, enforce_sorted=False)
    ep = nn.utils.rnn.pack_padded_sequence(E(x), lengths, enforce_sorted=False)
    to, (th, tc) = tm(tp)
    eo, (eh, ec) = em(ep)
    tpad, tlen = torch.nn.utils.rnn.pad_packed_sequence(to)
    epad, elen = nn.utils.rnn.pad_packed_sequence(eo)
    assert err(epad, tpad) < 1e-5 and err(eh, th) < 1e-5 and err(ec, tc) < 1e-5
    assert list(elen.tolist()) == list(tlen.tolist())


def test_lstm_packed_sequence_matches_torch():
    torch.manual_seed(2)
    tm, em = torch.nn.LSTM(4, 6, bidirectional=True), nn.LSTM(4, 6, bidirectional=True)
    same_weights(em, tm)
    packed_lstm_matches(tm, em, torch.randn(5, 3, 4), [5, 2, 4])


def test_cudnn_switches_and_recurrent_layers_on_cuda():
    # torch.backends.cudnn's switches with PyTorch's defaults, kept by ember's core: `enabled`
    # sends recurrent layers on CUDA through cuDNN, off they run ember's own CUDA kernels; both
    # must give PyTorch's numbers (on a machine with a GPU).
    cudnn = ember.backends.cudnn
    assert cudnn.enabled is torch.backends.cudnn.enabled is True
    assert cudnn.allow_tf32 is torch.backends.cudnn.allow_tf32 is True
    version = cudnn.version()
    assert (version is None) == (not cudnn.is_available())
    assert version is None or version >= 8901
    with pytest.raises(AttributeError, match="torch.backends.cudnn.no_such_switch"):
        cudnn.no_such_switch
    torch.manual_seed(4)
    tm = torch.nn.LSTM(5, 8, num_layers=2, bidirectional=True)
    x = torch.randn(7, 3, 5)
    to, (th, tc) = tm(x)
    to.sum().backward()
    try:
        for on in (False, True):
            cudnn.enabled, cudnn.allow_tf32 = on, False
            assert cudnn.enabled is on and cudnn.allow_tf32 is False
            devices = ["cpu"] + (["cuda"] if ember.cuda.is_available() else [])
            for device in devices:
                em = nn.LSTM(5, 8, num_layers=2, bidirectional=True)
                same_weights(em, tm)
                em.to(device)
                eo, (eh, ec) = em(E(x).to(device))
                eo.sum().backward()
                for got, want in ((eo, to), (eh, th), (ec, tc)):
                    assert err(got.cpu(), want) < 1e-4, (on, device)
                for (name, ep), tp in zip(em.named_parameters(), tm.parameters()):
                    assert err(ep.grad.cpu(), tp.grad) < 1e-4, (on, device, name)
    finally:
        cudnn.enabled, cudnn.allow_tf32 = True, True


@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cell):
    torch.manual_seed(3)
    tm, em = getattr(torch.nn, cell)(4, 5), getattr(nn, cell)(4, 5)
    same_weights(em, tm)
    x = torch.randn(3, 4)
    to, eo = tm(x), em(E(x))
    for a, b in zip(eo if cell == "LSTMCell" else (eo,), to if cell == "LSTMCell" else (to,)):
        assert err(a, b) < 1e-6


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_with_projections_matches_torch(bidirectional, bias):
    # proj_size: h = W_hr (o * tanh(c)); weight_hr_l* after the biases in the state dict, h0 of
    # proj_size features, c0 of hidden_size; packed input too. Outputs, states and gradients.
    torch.manual_seed(7)
    kw = dict(num_layers=2, bidirectional=bidirectional, bias=bias, proj_size=3)
    tm, em = torch.nn.LSTM(5, 7, **kw), nn.LSTM(5, 7, **kw)
    same_weights(em, tm)
    assert repr(em) == repr(tm)
    dirs = 2 if bidirectional else 1
    x = torch.randn(6, 4, 5, requires_grad=True)
    state = (torch.randn(2 * dirs, 4, 3), torch.randn(2 * dirs, 4, 7))
    ex = E(x, True)
    to, (th, tc) = tm(x, state)
    eo, (eh, ec) = em(ex, tuple(E(s) for s in state))
    assert tuple(eo.shape) == tuple(to.shape) == (6, 4, 3 * dirs)
    assert err(eo, to) < 1e-5 and err(eh, th) < 1e-5 and err(ec, tc) < 1e-5
    (to.pow(2).sum() + th.sum() + tc.sum()).backward()
    (eo.pow(2).sum() + eh.sum() + ec.sum()).backward()
    assert err(ex.grad, x.grad) < 1e-4
    for (name, ep), tp in zip(em.named_parameters(), tm.parameters()):
        assert err(ep.grad, tp.grad) < 1e-4, name
    packed_lstm_matches(tm, em, x, [6, 2, 5, 1])


def test_projections_are_lstm_only_and_narrower_than_the_cells():
    for make, message in [(lambda: nn.GRU(4, 6, proj_size=2), "only supported for LSTM"),
                          (lambda: nn.LSTM(4, 6, proj_size=6), "smaller than hidden_size"),
                          (lambda: nn.LSTM(4, 6, proj_size=-1), "positive integer or zero")]:
        with pytest.raises(ValueError, match=message):
            make()
    lstm = nn.LSTM(4, 6, proj_size=2)
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 3, 2\\) for hx"):
        lstm(ember.randn(5, 3, 4), (ember.zeros(1, 3, 6), ember.zeros(1, 3, 6)))


def test_recurrent_bad_input_is_a_clear_error():
    lstm = nn.LSTM(4, 6)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(ember.randn(5, 3, 7))


# --- attention ---

def _reference_attention(q, k, v, mask=None, causal=False):
    """softmax(q k^T / sqrt(E) + mask) v written out in torch."""
    w = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    if causal:
        w = w.masked_fill(~torch.ones(w.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        w = w.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else w + mask
    return torch.softmax(w, -1) @ v


@pytest.mark.parametrize("shapes", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)),
                                    ((2, 130, 64), (2, 200, 64), (2, 200, 32))])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [None, "bool", "float"])
@pytest.mark.parametrize("path", ["scaled_dot_product_attention", "_attention_math"])
def test_attention_matches_torch(shapes, causal, mask, path):
    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(s, generator=gen, requires_grad=True) for s in shapes)
    L, S = shapes[0][-2], shapes[1][-2]
    m = None
    if mask == "bool":
        m = torch.rand(L, S, generator=gen) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = torch.randn(L, S, generator=gen)
    out = _reference_attention(q, k, v, m, causal)
    g = torch.randn(out.shape, generator=gen)
    out.backward(g)
    eq, ek, ev = E(q, True), E(k, True), E(v, True)
    eout = getattr(F, path)(eq, ek, ev, None if m is None else E(m), is_causal=causal)
    if isinstance(eout, tuple):
        eout = eout[0]
    eout.backward(E(g))
    assert err(eout, out) < 1e-5
    for a, b in ((eq, q), (ek, k), (ev, v)):
        assert err(a.grad, b.grad) < 1e-5


def test_fused_attention_dropout_keeps_forward_and_backward_consistent():
    # With v the identity, the output is the dropped weights themselves; v's gradient under a
    # sum is their column sums: the backward must drop exactly what the forward dropped.
    S = 70
    q, k = ember.randn(3, 50, 16), ember.randn(3, S, 16)
    v = ember.eye(S).expand(3, S, S).contiguous().requires_grad_()
    ember.manual_seed(5)
    p = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    p.sum().backward()
    expect = p.detach().sum(1).unsqueeze(-1).expand(3, S, S)
    assert (v.grad - expect).abs().max().item() < 1e-5
    dropped = (p == 0).float().mean().item()
    assert 0.35 < dropped < 0.45
    # Same seed, same mask; another seed, another.
    ember.manual_seed(5)
    assert ember.equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.4), p)
    ember.manual_seed(6)
    assert not ember.equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.4), p)


def test_attention_bad_input_is_a_clear_error():
    q = ember.randn(2, 4, 8)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(Exception, match="8.*6|6.*8"):
        F.scaled_dot_product_attention(q, ember.randn(2, 4, 6), ember.randn(2, 4, 6))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("options", [{}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                     {"kdim": 6, "vdim": 10}, {"bias": False}])
def test_multihead_attention_matches_torch(batch_first, options):
    torch.manual_seed(6)
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=batch_first, **options)
    em = nn.MultiheadAttention(16, 4, batch_first=batch_first, **options)
    same_weights(em, tm)
    L, S, N = 5, 7, 3
    kd, vd = options.get("kdim", 16), options.get("vdim", 16)

    def make(n, d):
        return torch.randn((N, n, d) if batch_first else (n, N, d))

    q, k, v = make(L, 16), make(S, kd), make(S, vd)
    attn_mask = torch.rand(L, S) > 0.7
    attn_mask[:, 0] = False
    padding = torch.rand(N, S) > 0.7
    padding[:, 0] = False
    for need_weights in (True, False):
        for masks in ({}, {"attn_mask": attn_mask}, {"key_padding_mask": padding},
                      {"attn_mask": torch.randn(L, S)},
                      {"attn_mask": attn_mask, "key_padding_mask": padding}):
            to, tw = tm(q, k, v, need_weights=need_weights, **masks)
            eo, ew = em(E(q), E(k), E(v), need_weights=need_weights,
                        **{name: E(m) for name, m in masks.items()})
            assert err(eo, to) < 1e-5
            assert (ew is None) == (tw is None)
            if tw is not None:
                assert err(ew, tw) < 1e-5


def test_multihead_self_attention_gradients_and_unbatched_input():
    torch.manual_seed(7)
    tm, em = torch.nn.MultiheadAttention(32, 4), nn.MultiheadAttention(32, 4)
    same_weights(em, tm)
    x = torch.randn(6, 2, 32, requires_grad=True)
    ex = E(x, True)
    tm(x, x, x, need_weights=False)[0].pow(2).sum().backward()
    em(ex, ex, ex, need_weights=False)[0].pow(2).sum().backward()
    assert err(ex.grad, x.grad) < 1e-5
    assert err(em.in_proj_weight.grad, tm.in_proj_weight.grad) < 1e-4
    xu = x[:, 0].detach()
    for a, b in zip(em(E(xu), E(xu), E(xu)), tm(xu, xu, xu)):
        assert err(a, b) < 1e-5
    assert err(em(ex, ex, ex, average_attn_weights=False)[1],
               tm(x, x, x, average_attn_weights=False)[1]) < 1e-5


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_matches_torch(norm_first, activation, batch_first):
    torch.manual_seed(8)
    kw = dict(dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)
    tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(32, 4, 64, **kw), 2,
                                       norm=torch.nn.LayerNorm(32))
    eenc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, **kw), 2,
                                 norm=nn.LayerNorm(32))
    same_weights(eenc, tenc)
    x = torch.randn((3, 5, 32) if batch_first else (5, 3, 32))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[1, 3:] = True
    to = tenc(x, mask=mask, src_key_padding_mask=padding)
    eo = eenc(E(x), mask=nn.Transformer.generate_square_subsequent_mask(5),
              src_key_padding_mask=E(padding))
    assert err(eo, to) < 1e-5


def test_transformer_matches_torch_with_gradients():
    torch.manual_seed(9)
    tt = torch.nn.Transformer(32, 4, 2, 2, 64, dropout=0.0)
    et = nn.Transformer(32, 4, 2, 2, 64, dropout=0.0)
    same_weights(et, tt)
    src, tgt = torch.randn(7, 2, 32), torch.randn(5, 2, 32)
    to = tt(src, tgt, tgt_mask=tt.generate_square_subsequent_mask(5))
    eo = et(E(src), E(tgt), tgt_mask=nn.Transformer.generate_square_subsequent_mask(5))
    assert err(eo, to) < 1e-5
    to.pow(2).sum().backward()
    eo.pow(2).sum().backward()
    for (name, ep), tp in zip(et.named_parameters(), tt.parameters()):
        assert err(ep.grad, tp.grad) < 1e-4, name
    with pytest.raises(RuntimeError, match="feature number"):
        et(E(src), ember.randn(5, 2, 16))


def test_transformer_layers_copy_and_pickle():
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2)
    # The stack holds copies: changing one layer leaves the others alone.
    with ember.no_grad():
        enc.layers[0].linear1.weight.zero_()
    assert enc.layers[1].linear1.weight.abs().sum().item() > 0
    x = ember.randn(4, 3, 16)
    back = pickle.loads(pickle.dumps(enc))
    assert ember.allclose(back(x), enc(x))
    assert ember.allclose(copy.deepcopy(enc)(x), enc(x))
