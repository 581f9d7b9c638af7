"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) and gradients of gradients
(create_graph through ops that save their outputs or have fused backward kernels), against
PyTorch 1.13."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import ember
from ember.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def same(a, b):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert isinstance(a, ember.Tensor) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


torch.manual_seed(0)
X = torch.randn(3, dtype=torch.float64)
Y = torch.randn(2, 3, dtype=torch.float64)


def f(a, b):
    return (a.exp() * b.tanh()).sum(0)


def scalar(a, b):
    return (a.sigmoid() * b).sum().pow(2)


def test_vjp_jvp_jacobian_match_pytorch():
    v = torch.randn(3, dtype=torch.float64)
    same(vjp(f, (E(X), E(Y)), E(v)), TF.vjp(f, (X, Y), v))
    same(jvp(f, (E(X), E(Y)), (E(X), E(Y))), TF.jvp(f, (X, Y), (X, Y)))
    same(jacobian(f, (E(X), E(Y))), TF.jacobian(f, (X, Y)))
    same(jacobian(lambda a: a.sin(), E(X)), TF.jacobian(lambda a: a.sin(), X))
    same(jacobian(lambda a: (a * 2, a.sum()), E(X)), TF.jacobian(lambda a: (a * 2, a.sum()), X))
    same(vjp(lambda a: a.pow(2).sum(), E(X)), TF.vjp(lambda a: a.pow(2).sum(), X))


def test_hessians_match_pytorch():
    same(hessian(scalar, (E(X), E(Y))), TF.hessian(scalar, (X, Y)))
    same(hessian(lambda a: a.exp().sum() * a.sum(), E(X)),
         TF.hessian(lambda a: a.exp().sum() * a.sum(), X))
    same(vhp(scalar, (E(X), E(Y)), (E(X), E(Y))), TF.vhp(scalar, (X, Y), (X, Y)))
    same(hvp(scalar, (E(X), E(Y)), (E(X), E(Y))), TF.hvp(scalar, (X, Y), (X, Y)))


def test_unused_inputs_strict_mode_and_create_graph():
    same(jacobian(lambda a, b: a * 2, (E(X), E(Y[0]))),
         TF.jacobian(lambda a, b: a * 2, (X, Y[0])))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jacobian(lambda a, b: a * 2, (E(X), E(Y[0])), strict=True)
    with pytest.raises(RuntimeError, match="can only be None"):
        vjp(lambda a: a * 2, E(X))
    x = E(X).requires_grad_()
    _, g = vjp(lambda a: a.exp().sum(), x, create_graph=True)
    (gx,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gx.numpy(), X.exp().numpy(), rtol=1e-12)
    import importlib
    assert importlib.import_module("ember.autograd.functional").jacobian is jacobian


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid", "tanh", "sqrt", "relu", "gelu",
                                  "silu", "softmax", "log_softmax", "leaky_relu", "softplus"])
def test_gradient_of_gradient_through_saved_outputs_and_fused_backwards(name):
    """create_graph through exp/sigmoid/tanh/sqrt (which save their output) and relu/gelu/silu
    (fused backward kernels): the second derivative had lost their term, or raised."""
    results = []
    for lib in (torch, ember):
        a = lib.tensor([0.5, 1.0, 1.5], dtype=lib.float64, requires_grad=True)
        F = lib.nn.functional
        fn = {"exp": lib.exp, "sin": lib.sin, "sigmoid": lib.sigmoid, "tanh": lib.tanh,
              "sqrt": lib.sqrt, "relu": F.relu, "gelu": F.gelu, "silu": F.silu,
              "softmax": lambda t: F.softmax(t, 0), "log_softmax": lambda t: F.log_softmax(t, 0),
              "leaky_relu": lambda t: F.leaky_relu(t, 0.2), "softplus": F.softplus}[name]
        (g,) = lib.autograd.grad((fn(a) * a).sum(), a, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), a)
        results.append(h.detach().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("act", ["leaky_relu", "relu", "tanh", "sigmoid", "gelu", "silu", "elu"])
def test_gradient_penalty_through_conv2d(act):
    """A WGAN-GP gradient penalty: the norm of d critic / d input, differentiated again with
    respect to the weights (conv2d's backward under create_graph, with stride and groups)."""
    grads = []
    for lib in (torch, ember):
        torch.manual_seed(0)
        x0 = torch.randn(2, 4, 7, 7, dtype=torch.float64)
        w0 = torch.randn(6, 2, 3, 3, dtype=torch.float64) * 0.3
        l0 = torch.randn(1, 6 * 4 * 4, dtype=torch.float64) * 0.1
        cv = (lambda t: t) if lib is torch else E
        x, w, lin = (cv(t).requires_grad_() for t in (x0, w0, l0))
        F = lib.nn.functional
        fn = {"leaky_relu": lambda h: F.leaky_relu(h, 0.2)}.get(act, getattr(F, act))
        critic = (fn(F.conv2d(x, w, stride=2, padding=1, groups=2)).reshape(2, -1) @ lin.t())
        (g,) = lib.autograd.grad(critic.sum(), x, create_graph=True)
        penalty = ((g.reshape(2, -1).norm(2, dim=1) - 1) ** 2).mean()
        grads.append([t.detach().numpy() for t in lib.autograd.grad(penalty, [w, lin])])
    for a, b in zip(grads[1], grads[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)
