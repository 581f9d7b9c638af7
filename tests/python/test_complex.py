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
