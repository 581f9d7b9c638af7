"""Autograd from Python: backward, .grad, autograd.grad, hooks, grad modes, gradcheck, against
PyTorch 1.13."""
import numpy as np
import pytest
import torch

import ember


def test_backward_matches_pytorch():
    x_np = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x = ember.from_numpy(x_np.copy()).requires_grad_()
    t = torch.from_numpy(x_np.copy()).requires_grad_()
    for v, f in [(x, ember), (t, torch)]:
        y = (v.exp() * v.sin()).sum(1).pow(2).mean() + f.softmax(v, 1)[:, 0].sum()
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert x.is_leaf and x.grad_fn is None and x.grad.grad_fn is None


def test_grad_functions_and_create_graph():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0, 27.0]
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0, 18.0]
    z = ember.ones(2, requires_grad=True)
    assert ember.autograd.grad((z * 2).sum(), [z, x], allow_unused=True)[1] is None
    assert y.grad_fn.name().startswith("SumBackward")


def test_hooks_and_retain_grad():
    x = ember.ones(3, requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    mid = x * 3
    mid.retain_grad()
    mid.sum().backward()
    assert seen == [[3.0, 3.0, 3.0]] and x.grad.tolist() == [6.0, 6.0, 6.0]
    assert mid.grad.tolist() == [1.0, 1.0, 1.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_grad_modes():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad

    @ember.no_grad()
    def f(v):
        return v * 2

    assert not f(x).requires_grad and (x * 2).requires_grad
    with ember.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()
    with ember.inference_mode():
        assert not (x + 1).requires_grad


def test_gradcheck_and_data():
    x = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: (v.tanh() * v).sum(), [x])
    with pytest.raises(RuntimeError, match="gradcheck failed"):
        ember.autograd.gradcheck(lambda v: v.detach().sum() * 0 + v.sum() * 0 + (v * 0).sum() + 1.0 * v.detach().sum(), [x])
    w = ember.ones(2, requires_grad=True)
    w.data = ember.zeros(2)
    assert w.tolist() == [0.0, 0.0] and w.requires_grad and w.is_leaf
    d = w.detach()
    assert not d.requires_grad


def test_backward_errors_are_runtime_errors():
    x = ember.ones(2, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()  # the graph was freed
    with pytest.raises(RuntimeError):
        (x * 2).backward()  # a non-scalar output needs a gradient
