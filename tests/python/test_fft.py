"""torch.fft against PyTorch 1.13: every transform over one dim, two and n, with n/s padding and
trimming, the three norms, real and complex inputs, gradients, frequencies and shifts, errors."""
import numpy as np
import pytest
import torch

import ember


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def same(a, b, rtol=1e-5, atol=1e-5):
    assert str(a.dtype).rpartition(".")[2] == str(b.dtype).rpartition(".")[2], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().resolve_conj().numpy(), rtol=rtol,
                               atol=atol)


torch.manual_seed(0)
REAL = torch.randn(4, 6, 5)
CPLX = torch.randn(4, 6, 5, dtype=torch.complex64)
ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft"}


@pytest.mark.parametrize("name", ONE_DIM)
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("n,dim", [(None, -1), (8, 1), (3, 0), (None, 1)])
def test_one_dim(name, norm, n, dim):
    inputs = [REAL] if name in REAL_ONLY else [REAL, CPLX]
    for x in inputs:
        expected = getattr(torch.fft, name)(x, n=n, dim=dim, norm=norm)
        same(getattr(ember.fft, name)(E(x), n=n, dim=dim, norm=norm), expected)


@pytest.mark.parametrize("name", ONE_DIM)
@pytest.mark.parametrize("kind", ["2", "n"])
@pytest.mark.parametrize("s,dim", [(None, None), ((3, 8), None), ((5, -1), (0, 2)),
                                   (None, (2, 0))])
def test_n_dim(name, kind, s, dim):
    fn = name + kind
    if kind == "2" and dim is None:
        dim = (-2, -1)
    for x in [REAL] if name in REAL_ONLY else [REAL, CPLX.to(torch.complex128)]:
        expected = getattr(torch.fft, fn)(x, s=s, dim=dim, norm="ortho")
        same(getattr(ember.fft, fn)(E(x), s=s, dim=dim, norm="ortho"), expected)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_gradients(name):
    complex_in = name in ("irfft", "hfft", "irfftn", "hfftn")
    t = torch.randn(3, 5, dtype=torch.complex128 if complex_in else torch.float64,
                    requires_grad=True)
    kwargs = {"n": 7} if not name.endswith("n") else {}
    out = getattr(torch.fft, name)(t, **kwargs)
    cot = torch.randn_like(out)
    (gt,) = torch.autograd.grad(out, t, cot)
    e = E(t).requires_grad_()
    eo = getattr(ember.fft, name)(e, **kwargs)
    (ge,) = ember.autograd.grad(eo, e, E(cot))
    same(ge, gt, rtol=1e-10, atol=1e-10)


def test_freq_and_shift():
    for n in (1, 4, 7):
        same(ember.fft.fftfreq(n), torch.fft.fftfreq(n), rtol=0, atol=0)
        same(ember.fft.rfftfreq(n, 0.1), torch.fft.rfftfreq(n, 0.1), rtol=0, atol=0)
    same(ember.fft.fftfreq(5, d=2.0, dtype=ember.float64),
         torch.fft.fftfreq(5, d=2.0, dtype=torch.float64), rtol=0, atol=0)
    x = torch.arange(12).reshape(3, 4)
    same(ember.fft.fftshift(E(x)), torch.fft.fftshift(x))
    same(ember.fft.ifftshift(E(x), dim=0), torch.fft.ifftshift(x, dim=0))
    same(ember.fft.ifftshift(ember.fft.fftshift(E(x))), x)


def test_dtypes_and_errors():
    same(ember.fft.fft(ember.arange(4)), torch.fft.fft(torch.arange(4)))
    assert ember.fft.rfft(ember.ones(4, dtype=ember.float64)).dtype == ember.complex128
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        ember.fft.fft(ember.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        ember.fft.fft(ember.ones(4), n=0)
    with pytest.raises(RuntimeError, match="real input"):
        ember.fft.rfft(ember.ones(4, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match="same length"):
        ember.fft.fftn(ember.ones(4, 4), s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="unique"):
        ember.fft.fftn(ember.ones(4, 4), dim=(0, 0))


@pytest.mark.parametrize("kwargs", [
    {"n_fft": 16},
    {"n_fft": 16, "hop_length": 3, "window": "hann", "normalized": True},
    {"n_fft": 15, "win_length": 10, "center": False, "window": "hann"},
    {"n_fft": 16, "onesided": False, "pad_mode": "constant"},
])
def test_stft_istft(kwargs):
    x = torch.randn(2, 100, dtype=torch.float64)
    kw = dict(kwargs)
    if kw.pop("window", None):
        kw["window"] = torch.hann_window(kw.get("win_length", kw["n_fft"]), dtype=torch.float64)
    ekw = {k: (E(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    s = torch.stft(x, return_complex=True, **kw)
    es = ember.stft(E(x), return_complex=True, **ekw)
    same(es, s, rtol=1e-10, atol=1e-10)
    same(ember.stft(E(x[0]), return_complex=False, **ekw),
         torch.stft(x[0], return_complex=False, **kw), rtol=1e-10, atol=1e-10)
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    eikw = {k: v for k, v in ekw.items() if k != "pad_mode"}
    if kw.get("center", True):
        y = torch.istft(s, length=100, **ikw)
        same(ember.istft(es, length=100, **eikw), y, rtol=1e-10, atol=1e-10)
        same(ember.istft(es, **eikw), torch.istft(s, **ikw), rtol=1e-10, atol=1e-10)
    # Gradients through both.
    xt = x.clone().requires_grad_()
    xe = E(x).requires_grad_()
    gt, = torch.autograd.grad(torch.stft(xt, return_complex=True, **kw).abs().sum(), xt)
    ge, = ember.autograd.grad(ember.stft(xe, return_complex=True, **ekw).abs().sum(), xe)
    same(ge, gt, rtol=1e-9, atol=1e-9)


def test_stft_errors():
    # Unspecified for a real input: PyTorch 1.13's old real format.
    x = torch.randn(64, dtype=torch.float64)
    with pytest.warns(UserWarning):
        expected = torch.stft(x, 16)
    same(ember.stft(E(x), 16), expected, rtol=1e-10, atol=1e-10)
    same(ember.istft(E(expected), 16), torch.istft(expected, 16), rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError, match="win_length"):
        ember.stft(ember.ones(64), 16, win_length=20, return_complex=True)
