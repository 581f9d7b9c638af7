"""ember.func (torch.func's vmap, grad, grad_and_value) and torch.vmap: values against functorch
1.13 (Debian's python3-torch ships it), error messages as PyTorch 2.6 prints them."""
import numpy as np
import pytest
import torch

import ember

functorch = pytest.importorskip("functorch")


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def close(e, t):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_vmap_in_dims_out_dims_and_nesting_match_functorch():
    torch.manual_seed(0)
    x, y, w = torch.randn(3, 4), torch.randn(4), torch.randn(5, 4, 3)
    close(ember.vmap(ember.dot, in_dims=(0, None))(E(x), E(y)),
          functorch.vmap(torch.dot, in_dims=(0, None))(x, y))
    v = torch.randn(3, 5)
    close(ember.vmap(ember.mv, in_dims=(0, 1))(E(w), E(v)),
          functorch.vmap(torch.mv, in_dims=(0, 1))(w, v))
    got = ember.vmap(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(E(x))
    want = functorch.vmap(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(x)
    close(got[0], want[0])
    close(got[1], want[1])
    # nested: a batch of matrices, each mapped over its rows
    close(ember.vmap(ember.vmap(ember.sum))(E(w)), functorch.vmap(functorch.vmap(torch.sum))(w))
    # inputs nested in containers, in_dims given for the container as a whole
    got = ember.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": None},))(
        {"a": E(x), "b": E(y)})
    close(got, x * y)
    assert ember.vmap is ember.func.vmap


def test_per_sample_gradients_with_grad_inside_vmap():
    torch.manual_seed(1)
    w, xs = torch.randn(4), torch.randn(6, 4)

    def loss(w, x):
        return (w * x).sin().sum()
    want = functorch.vmap(functorch.grad(loss), in_dims=(None, 0))(w, xs)
    got = ember.vmap(ember.func.grad(loss), in_dims=(None, 0))(E(w), E(xs))
    close(got, want)
    assert not got.requires_grad
    g, v = ember.func.grad_and_value(loss)(E(w), E(xs[0]))
    wg, wv = functorch.grad_and_value(loss)(w, xs[0])
    close(g, wg)
    close(v, wv)
    # grad of grad: d2/da2 a^3 = 6a
    assert ember.func.grad(ember.func.grad(lambda a: a ** 3))(ember.tensor(2.0)).item() == 12.0
    g, aux = ember.func.grad(lambda a: ((a ** 2).sum(), "aux"), has_aux=True)(ember.ones(2))
    assert g.tolist() == [2.0, 2.0] and aux == "aux"


def test_randomness_modes():
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness "
                                           "error mode"):
        ember.vmap(lambda a: a + ember.rand(1))(ember.zeros(3))
    same = ember.vmap(lambda a: a + ember.rand(1), randomness="same")(ember.zeros(3))
    assert same.shape == (3, 1) and len(set(same.flatten().tolist())) == 1
    different = ember.vmap(lambda a: a + ember.rand(1), randomness="different")(ember.zeros(3))
    assert len(set(different.flatten().tolist())) == 3


@pytest.mark.parametrize("call,message", [
    (lambda: ember.vmap(lambda a, b: a + b)(ember.ones(3), ember.ones(4)),
     "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
     "[3, 4] for the mapped dimension"),
    (lambda: ember.vmap(lambda a, b: a, in_dims=(0, 0))(ember.ones(3), 2),
     "vmap(<lambda>, in_dims=(0, 0), ...)(<inputs>): Got in_dim=0 for an input but the input "
     "is of type <class 'int'>. We cannot vmap over non-Tensor arguments, please use None as "
     "the respective in_dim"),
    (lambda: ember.vmap(ember.sin, in_dims=[0])(ember.ones(3)),
     "vmap(sin, in_dims=[0], ...)(<inputs>): expected `in_dims` to be int or a (potentially "
     "nested) tuple matching the structure of inputs, got: <class 'list'>."),
    (lambda: ember.vmap(ember.sin, in_dims=1)(ember.ones(3)),
     "vmap(sin, in_dims=1, ...)(<inputs>): Got in_dim=1 for some input, but that input is a "
     "Tensor of dimensionality 1 so expected in_dim to satisfy -1 <= in_dim < 1."),
    (lambda: ember.vmap(lambda a: 1)(ember.ones(3)),
     "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'int'>. Did you "
     "mean to set out_dims= to None for output?"),
])
def test_errors_as_pytorch_2_6(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message
