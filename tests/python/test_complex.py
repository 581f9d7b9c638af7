"""Complex tensors (complex64, complex128): dtypes and promotion, conversions (NumPy, lists,
item, printing, torch.save), views as real, parts, elementwise math, reductions and matmul,
against PyTorch 1.13."""
import io

import numpy as np
import pytest
import torch

import ember


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def same(a, b, rtol=1e-6, atol=1e-6):
    assert isinstance(a, ember.Tensor)
    assert str(a.dtype).rpartition(".")[2] == str(b.dtype).rpartition(".")[2], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().resolve_conj().numpy(), rtol=rtol,
                               atol=atol)


torch.manual_seed(0)
Z = torch.randn(3, 4, dtype=torch.complex64)
W = torch.randn(3, 4, dtype=torch.complex64)
Z128 = torch.randn(2, 5, dtype=torch.complex128)


def test_dtypes_and_promotion():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.complex64.is_complex and not ember.complex64.is_floating_point
    assert ember.complex128.itemsize == 16 and ember.complex64.to_real() == ember.float32
    assert ember.float64.to_complex() == ember.complex128
    for a, b in [("complex64", "float64"), ("complex64", "int64"), ("complex128", "float32"),
                 ("complex64", "bool"), ("float16", "complex64")]:
        got = ember.promote_types(getattr(ember, a), getattr(ember, b))
        assert str(got) == "ember." + str(torch.promote_types(getattr(torch, a),
                                                              getattr(torch, b)))[6:]
    assert not ember.can_cast(ember.complex64, ember.float64)
    assert ember.can_cast(ember.float64, ember.complex64)
    x = ember.ones(3, dtype=ember.float64)
    assert (x + 1j).dtype == ember.complex128  # a complex scalar keeps float64's precision
    assert (ember.ones(3) * (1 + 2j)).dtype == ember.complex64
    assert (ember.ones(3, dtype=ember.int64) + 1j).dtype == ember.complex64


def test_conversions():
    z = E(Z)
    same(z, Z)
    assert ember.tensor([1 + 2j, 3]).dtype == ember.complex64
    assert ember.tensor([1 + 2j], dtype=ember.complex128).tolist() == [1 + 2j]
    assert ember.tensor(2 - 1j).item() == 2 - 1j
    assert isinstance(z[0, 0].item(), complex)
    same(z.cdouble(), Z.cdouble())
    same(ember.ones(2, 2).cfloat(), torch.ones(2, 2).cfloat())
    same(z.real, Z.real)  # complex to real keeps the real part, as copy_ does
    same(z.to(ember.float32), Z.real.clone())
    buf = io.BytesIO()
    ember.save({"z": z}, buf)
    buf.seek(0)
    same(ember.load(buf)["z"], Z)


def test_printing():
    z = ember.tensor([1 + 2j, -3.5 - 1j])
    assert repr(z) == repr(torch.tensor([1 + 2j, -3.5 - 1j])).replace("torch", "ember")
    zi = ember.tensor([[1 + 2j, 3 - 4j]], dtype=ember.complex128)
    assert repr(zi) == repr(torch.tensor([[1 + 2j, 3 - 4j]], dtype=torch.complex128)).replace(
        "torch", "ember")


def test_views_and_parts():
    z = E(Z)
    r = ember.view_as_real(z)
    same(r, torch.view_as_real(Z))
    assert r.data_ptr() == z.data_ptr()
    same(ember.view_as_complex(r), Z)
    same(z.real, Z.real)
    same(z.imag, Z.imag)
    same(ember.real(z), torch.real(Z))
    same(z.conj(), Z.conj().resolve_conj())
    same(z.mH, Z.mH.resolve_conj())
    z.imag.zero_()
    assert (z.imag == 0).all()
    with pytest.raises(RuntimeError, match="non-complex"):
        ember.ones(2).imag
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        ember.view_as_complex(ember.ones(3, 3))
    with pytest.raises(RuntimeError, match="complex tensors"):
        ember.view_as_real(ember.ones(3))
    x = ember.arange(8, dtype=ember.float32)
    same(x.view(ember.complex64), torch.arange(8, dtype=torch.float32).view(torch.complex64))
    same(E(Z).view(ember.float32), Z.view(torch.float32))
    with pytest.raises(RuntimeError, match="divisible by 2"):
        ember.ones(3).view(ember.complex64)


def test_build_from_parts():
    a, b = torch.randn(3, 1), torch.randn(4)
    same(ember.complex(E(a), E(b)), torch.complex(a, b))
    same(ember.polar(E(a.abs()), E(b)), torch.polar(a.abs(), b))
    with pytest.raises(RuntimeError, match="Float or Double"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos",
                                  "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
                                  "atanh", "log10", "log2", "neg", "square",
                                  "reciprocal", "abs", "angle", "sgn"])
def test_unary(name):
    for t in (Z, Z128):
        expected = getattr(torch, name)(t)
        same(getattr(ember, name)(E(t)), expected, rtol=2e-5, atol=2e-5)


def test_binary_and_ternary():
    z, w = E(Z), E(W)
    same(z + w, Z + W)
    same(z - 2 * w, Z - 2 * W)
    same(z * w, Z * W)
    same(z / w, Z / W, rtol=1e-5)
    same(z * (2 - 1j), Z * (2 - 1j))
    same(z + ember.ones(4, dtype=ember.float64), Z + torch.ones(4, dtype=torch.float64))
    same(z ** 2, Z ** 2, rtol=1e-5)
    same(ember.pow(z, w), torch.pow(Z, W), rtol=1e-4, atol=1e-5)
    same(ember.addcmul(z, z, w, value=0.5), torch.addcmul(Z, Z, W, value=0.5), rtol=1e-5)
    assert (z == z).all() and not (z != z).any()
    same(ember.where(ember.tensor([True, False, True, False]), z, w),
         torch.where(torch.tensor([True, False, True, False]), Z, W))
    with pytest.raises(RuntimeError, match="complex64"):
        ember.maximum(z, w)
    with pytest.raises(RuntimeError, match="sgn"):
        ember.sign(z)


def test_reductions_and_matmul():
    z = E(Z)
    same(z.sum(), Z.sum(), rtol=1e-5)
    same(z.sum(0), Z.sum(0), rtol=1e-5)
    same(z.mean(1), Z.mean(1), rtol=1e-5)
    same(z.prod(1), Z.prod(1), rtol=1e-5)
    same(z @ E(W).mT, Z @ W.mT, rtol=1e-5)
    same(E(Z128) @ E(Z128).mT, Z128 @ Z128.mT, rtol=1e-12)
    same(ember.cat([z, E(W)]), torch.cat([Z, W]))
    same(z[1:, ::2].flip(0), Z[1:, ::2].flip(0))
    same(z.index_select(1, ember.tensor([3, 0])), Z.index_select(1, torch.tensor([3, 0])))


def test_gradient_through_real_functions_of_complex():
    # A real loss of complex intermediates: d/dx of |x e^{i y}|^2 etc. against PyTorch's.
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = torch.randn(4, dtype=torch.float64, requires_grad=True)
    ex, ey = E(x).requires_grad_(), E(y).requires_grad_()
    zt = torch.polar(x.abs() + 1, y)
    ze = ember.polar(ex.abs() + 1, ey)
    lt = (zt * zt.conj()).real.sum() + zt.angle().sum() + zt.imag.pow(2).sum()
    le = (ze * ze.conj()).real.sum() + ze.angle().sum() + ze.imag.pow(2).sum()
    lt.backward()
    le.backward()
    np.testing.assert_allclose(ex.grad.numpy(), x.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ey.grad.numpy(), y.grad.numpy(), rtol=1e-10)


def test_norms_var_and_checks():
    z = E(Z128)
    same(ember.linalg.vector_norm(z), torch.linalg.vector_norm(Z128), rtol=1e-12)
    same(ember.linalg.matrix_norm(z), torch.linalg.matrix_norm(Z128), rtol=1e-12)
    same(z.norm(p=1), Z128.norm(p=1), rtol=1e-12)
    same(z.var(1), Z128.var(1), rtol=1e-12)
    same(z.std(0, unbiased=False), Z128.std(0, unbiased=False), rtol=1e-12)
    same(z.cumsum(1), Z128.cumsum(1), rtol=1e-12)
    same(z.cumprod(1), Z128.cumprod(1), rtol=1e-12)
    same(ember.eye(3, dtype=ember.complex64), torch.eye(3, dtype=torch.complex64))
    assert ember.isclose(z, z + 1e-12j).all()
    assert ember.allclose(z, z.clone()) and not ember.allclose(z, z + 1j)
    assert ember.isnan(ember.tensor([complex("nan+1j"), 1j])).tolist() == [True, False]
    assert ember.isreal(ember.tensor([1 + 0j, 1j])).tolist() == [True, False]
    r = ember.randn(1000, dtype=ember.complex64)
    assert r.dtype == ember.complex64 and 0.8 < float(r.abs().pow(2).mean()) < 1.2


def test_complex_scalars_in_products():
    a, b, c = torch.randn(2, 3, dtype=torch.complex128), torch.randn(3, 4, dtype=torch.complex128), \
        torch.randn(2, 4, dtype=torch.complex128)
    same(ember.addmm(E(c), E(a), E(b), beta=0.5j, alpha=1 - 2j),
         torch.addmm(c, a, b, beta=0.5j, alpha=1 - 2j), rtol=1e-12)
    same(ember.addcmul(E(c), E(c), E(c), value=2j), torch.addcmul(c, c, c, value=2j), rtol=1e-12)
    same(ember.linalg.vecdot(E(a), E(a)), torch.linalg.vecdot(a, a), rtol=1e-12)
    v = torch.randn(5, dtype=torch.complex128)
    # Debian's PyTorch returns 0 for a complex dot product (its BLAS call): NumPy's is the reference.
    assert np.allclose(ember.vdot(E(v), E(v)).item(), np.vdot(v.numpy(), v.numpy()))
    assert np.allclose(ember.dot(E(v), E(v)).item(), np.dot(v.numpy(), v.numpy()))


def test_convolution():
    x = torch.randn(2, 3, 8, 8, dtype=torch.complex128)
    w = torch.randn(4, 3, 3, 3, dtype=torch.complex128)
    b = torch.randn(4, dtype=torch.complex128)
    same(ember.nn.functional.conv2d(E(x), E(w), E(b), padding=1),
         torch.nn.functional.conv2d(x, w, b, padding=1), rtol=1e-10, atol=1e-10)
    xt, wt = torch.randn(2, 3, 7, dtype=torch.complex128), torch.randn(3, 2, 3, dtype=torch.complex128)
    same(ember.nn.functional.conv_transpose1d(E(xt), E(wt), stride=2),
         torch.nn.functional.conv_transpose1d(xt, wt, stride=2), rtol=1e-10, atol=1e-10)
    x1, w1 = torch.randn(2, 3, 9, dtype=torch.complex64), torch.randn(4, 3, 2, dtype=torch.complex64)
    same(ember.nn.functional.conv1d(E(x1), E(w1)), torch.nn.functional.conv1d(x1, w1), rtol=1e-4,
         atol=1e-5)


def test_solve_inv_and_eig():
    a = torch.randn(3, 4, 4, dtype=torch.complex128)
    b = torch.randn(3, 4, 2, dtype=torch.complex128)
    same(ember.linalg.solve(E(a), E(b)), torch.linalg.solve(a, b), rtol=1e-10, atol=1e-10)
    same(ember.linalg.inv(E(a)), torch.linalg.inv(a), rtol=1e-10, atol=1e-10)
    # Gradients through a complex solve, against PyTorch's.
    at = a.clone().requires_grad_()
    ae = E(a).requires_grad_()
    gt, = torch.autograd.grad(torch.linalg.solve(at, b).abs().sum(), at)
    ge, = ember.autograd.grad(ember.linalg.solve(ae, E(b)).abs().sum(), ae)
    same(ge, gt, rtol=1e-9, atol=1e-9)
    r = torch.randn(2, 5, 5, dtype=torch.float64)
    wt, vt = torch.linalg.eig(r)
    we, ve = ember.linalg.eig(E(r))
    same(we, wt, rtol=1e-10, atol=1e-10)
    same(ve, vt, rtol=1e-10, atol=1e-10)
    same(ember.linalg.eigvals(E(r)), torch.linalg.eigvals(r), rtol=1e-10, atol=1e-10)
    rt = r.clone().requires_grad_()
    re_ = E(r).requires_grad_()
    # A loss that does not depend on the eigenvectors' phases (else PyTorch refuses).
    w, v = torch.linalg.eig(rt)
    gt, = torch.autograd.grad(w.real.sum() + w.imag.pow(2).sum() + v.abs().sum(), rt)
    w, v = ember.linalg.eig(re_)
    ge, = ember.autograd.grad(w.real.sum() + w.imag.pow(2).sum() + v.abs().sum(), re_)
    same(ge, gt, rtol=1e-8, atol=1e-8)


def test_lerp():
    for w in (0.25, 0.75, 0.1 + 0.2j, 0.6 - 0.3j):
        same(ember.lerp(E(Z), E(W), w), torch.lerp(Z, W, w), rtol=1e-6)
    wt = torch.randn(3, 4, dtype=torch.complex64)
    same(ember.lerp(E(Z), E(W), E(wt)), torch.lerp(Z, W, wt), rtol=1e-5, atol=1e-6)


def _c32(t):
    """A torch complex32 tensor as ember's (by its float16 pairs: NumPy has no complex32)."""
    return ember.view_as_complex(E(torch.view_as_real(t)))


def _pairs(e):
    return torch.view_as_real(e).numpy() if isinstance(e, torch.Tensor) else \
        ember.view_as_real(e).numpy()


def test_complex32_dtype_promotion_and_parts():
    assert ember.chalf is ember.complex32 and ember.complex32.is_complex
    assert ember.complex32.itemsize == 4 and ember.complex32.to_real() == ember.float16
    assert ember.float16.to_complex() == ember.complex32
    for a in ("complex32",):
        for b in ("float16", "bfloat16", "float32", "float64", "int8", "int64", "bool",
                  "complex64", "complex128"):
            got = ember.promote_types(getattr(ember, a), getattr(ember, b))
            assert str(got)[6:] == str(torch.promote_types(getattr(torch, a),
                                                           getattr(torch, b)))[6:], (a, b)
    assert (ember.ones(3, dtype=ember.float16) + 1j).dtype == ember.complex32
    h = torch.randn(4, 2).half()
    z = ember.view_as_complex(E(h))
    assert z.dtype == ember.complex32 and tuple(z.shape) == (4,)
    np.testing.assert_array_equal(ember.view_as_real(z).numpy(), h.numpy())
    c = ember.complex(E(h[:, 0].contiguous()), E(h[:, 1].contiguous()))
    np.testing.assert_array_equal(_pairs(c), _pairs(torch.complex(h[:, 0], h[:, 1])))
    np.testing.assert_array_equal(z.real.numpy(), h[:, 0].numpy())
    with pytest.raises(TypeError, match="numpy"):
        z.numpy()
    assert ember.tensor([1.5 - 2j]).chalf().item() == 1.5 - 2j
    for name in ("complex32", "complex64", "complex128"):  # the limits of the parts, as PyTorch
        got, want = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
        assert (got.dtype, got.bits, got.eps, got.max) == (want.dtype, want.bits, want.eps,
                                                           want.max)
    assert "dtype=ember.complex32" in repr(z)


def test_complex32_elementwise_matches_pytorch_bitwise():
    torch.manual_seed(3)
    a = torch.randn(6, dtype=torch.cfloat).to(torch.chalf)
    b = torch.randn(6, dtype=torch.cfloat).to(torch.chalf)
    ea, eb = _c32(a), _c32(b)
    for f in (lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y,
              lambda x, y: x + 2 * y, lambda x, y: -x):
        np.testing.assert_array_equal(_pairs(f(ea, eb)), _pairs(f(a, b)))
    np.testing.assert_array_equal(ea.abs().numpy(), a.abs().numpy())
    np.testing.assert_array_equal((ea == ea).numpy(), (a == a).numpy())
    np.testing.assert_array_equal(ember.isfinite(ea).numpy(), torch.isfinite(a).numpy())
    # values moved, not computed: cat, where, index_select, masked_fill, conversions
    np.testing.assert_array_equal(_pairs(ember.cat([ea, eb])), _pairs(torch.cat([a, b])))
    m = torch.tensor([True, False] * 3)
    np.testing.assert_array_equal(_pairs(ember.where(E(m), ea, eb)), _pairs(torch.where(m, a, b)))
    i = torch.tensor([5, 0, 2])
    np.testing.assert_array_equal(_pairs(ea.index_select(0, E(i))), _pairs(a.index_select(0, i)))
    np.testing.assert_array_equal(_pairs(ea.to(ember.complex64).chalf()), _pairs(a))
    np.testing.assert_array_equal(ea.to(ember.complex64).numpy(), a.to(torch.complex64).numpy())


def test_complex32_saves_and_loads(tmp_path):
    # (PyTorch 1.13 cannot save complex32 itself: "dtype torch.complex32 is not recognized".)
    a = ember.tensor([1 + 2j, -0.5j, 3]).chalf()
    ember.save({"a": a}, tmp_path / "e.pt")
    got = ember.load(tmp_path / "e.pt")["a"]
    assert got.dtype == ember.complex32 and got.tolist() == [1 + 2j, -0.5j, 3]


# torch.save({"a": torch.tensor([1 + 2j, -0.5j, 3]).to(torch.chalf), "f": torch.tensor([1.5])})
# under PyTorch 2.6 (a Debian 13 root), zlib-compressed and base64-encoded: complex32 is written
# as an untyped storage with _rebuild_tensor_v3 naming the dtype.
_TORCH_2_6_COMPLEX32_FILE = (
    "eNqllE2L00AcxidNm9ZY+7Lr62VvQgTNpsluSNeXlSC55GCtLJZSCNlk3AZj00mmxRWUvVRcP4BHP4dHv4Ig4t2rJ0Hw"
    "6ExaQ5KyW1YHkmHC/P7PM/95SMdkiwBUKmBpNMAasENn6E3hpmtjWxw/8w29BvqZcVR4hYDQYwhgI8bBASFEa4I9P+Kt"
    "EO5PPN+1MBxFQWhNFR4VBKFXJpsjstM+gIhdIIs1vzfCh2PoPl4sUTEuLaFSjyWzM54gzqxiVH5kApOdoYrJzNC5Y8cJ"
    "fB862AtGEf8wdGEI3Qeeg3nE3+ii83MN3gmej334QpF5REpc6KJaXPwpqq/wTYCGIAwXXnnDD2ycOGzGRVpobciZDEbr"
    "1BkxdZG+Lh0PqYHLGF3poqsTsWOWK++sN7JIEPp0Tux+E6wn3d8/xDCghzL0eq79fd/D2Ie07uzu92scIelzct0auJe5"
    "1U3J0HfyRc8wwB1wHxyBj0CnquXKzo+3gyrRqa5woWVdtAx9659cAPBpl+oG178NiBgonqpbB7uJ7hSGEcmLod/+j+P3"
    "FZ6qf/5wsFcg9Qunqm8AOVEX42NHMPRs33tp0+Ranmvo4hnNtBRZVSRVU9taW9G2FUmTtiVJUpW2psqKKrVlTSUftqjL"
    "n++f/BKIDyF2yVCzic90KhtLzvP/gTydzl4zQ75mwHKO83g6NLUM/pUBubjm2fTFZ9lBIce28mz62uoZ9kuKXQQlD6e7"
    "uZGBuyxYcc8dk+Nu/k0FeyshudxMu0fHb3Y+E47+PMG0NF8z8bcSN2e4eP987x8P70ci")


@pytest.mark.parametrize("weights_only", [True, False])
def test_complex32_file_of_pytorch_2_6_loads(tmp_path, weights_only):
    import base64
    import zlib
    path = tmp_path / "c32.pt"
    path.write_bytes(zlib.decompress(base64.b64decode(_TORCH_2_6_COMPLEX32_FILE)))
    got = ember.load(path, weights_only=weights_only)
    assert got["a"].dtype == ember.complex32 and got["a"].tolist() == [1 + 2j, -0.5j, 3]
    assert got["f"].tolist() == [1.5]
