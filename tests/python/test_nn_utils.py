"""ember.nn.utils against PyTorch 1.13's torch.nn.utils: the same computations in both libraries
(float64, weights copied through numpy) - clipping, parameters as a vector, weight_norm and
spectral_norm (hooks and parametrizations), parametrize, fusion, functional_call, skip_init."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrize as TP
from torch.nn.utils import parametrizations as TPZ

import ember
import ember.nn.utils.parametrize as EP
from ember.nn.utils import parametrizations as EPZ


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def N(t):
    return np.asarray(t.detach().numpy())


def close(ours, theirs, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(N(ours), theirs.detach().numpy(), rtol=rtol, atol=atol)


def linear_pair(in_features=4, out_features=3, bias=True, seed=0):
    torch.manual_seed(seed)
    t = torch.nn.Linear(in_features, out_features, bias=bias).double()
    e = ember.nn.Linear(in_features, out_features, bias=bias).double()
    e.weight = ember.nn.Parameter(E(t.weight))
    if bias:
        e.bias = ember.nn.Parameter(E(t.bias))
    return t, e


class PyLinear:
    """A Linear written in Python, in each library (a module whose forward reads self.weight)."""

    @staticmethod
    def make(lib, src):
        class Lin(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(src.weight.detach().clone())
                self.bias = lib.nn.Parameter(src.bias.detach().clone())

            def forward(self, x):
                return lib.nn.functional.linear(x, self.weight, self.bias)
        return Lin()


def pair_kinds():
    """(torch module, ember module) for ember's C++ Linear and for a Python module."""
    t, e = linear_pair()
    yield "native", t, e
    t2, e2 = linear_pair(seed=1)
    yield "python", PyLinear.make(torch, t2), PyLinear.make(ember, e2)


KINDS = ["native", "python"]


def make_pair(kind):
    return next((t, e) for k, t, e in pair_kinds() if k == kind)


def forward_backward(t, e, x, steps=1):
    """Runs both modules `steps` times on x, then backward of a non-linear loss."""
    for _ in range(steps):
        yt, ye = t(x), e(E(x))
    close(ye, yt)
    (yt ** 2).sum().backward()
    (ye ** 2).sum().backward()


# --- clip_grad, convert_parameters ---

@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm_matches_pytorch(norm_type, max_norm):
    rng = np.random.RandomState(0)
    grads = [rng.randn(3, 4), rng.randn(5)]
    results = {}
    for lib in (torch, ember):
        ps = [(torch.zeros(g.shape, dtype=torch.float64) if lib is torch else
               ember.zeros(*g.shape, dtype=ember.float64)).requires_grad_(True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = torch.tensor(g) if lib is torch else ember.from_numpy(g.copy())
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
        results[lib] = (float(total), [N(p.grad) for p in ps])
    assert results[ember][0] == pytest.approx(results[torch][0], rel=1e-12)
    for a, b in zip(results[ember][1], results[torch][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_total_norm_and_clip_with_norm_compose_clip_grad_norm():
    rng = np.random.RandomState(1)
    ps = [ember.from_numpy(rng.randn(4)).requires_grad_(True) for _ in range(3)]
    for p in ps:
        p.grad = ember.from_numpy(rng.randn(4))
    expected = [N(p.grad).copy() for p in ps]
    total = ember.nn.utils.get_total_norm([p.grad for p in ps], 2.0)
    ref = np.linalg.norm(np.concatenate(expected))
    assert float(total) == pytest.approx(ref, rel=1e-12)
    ember.nn.utils.clip_grads_with_norm_(ps, 1.0, total)
    for p, g in zip(ps, expected):
        np.testing.assert_allclose(N(p.grad), g * (1.0 / (ref + 1e-6)), rtol=1e-12)
    assert float(ember.nn.utils.get_total_norm([])) == 0.0


def test_clip_grad_errors_and_deprecation_match_pytorch():
    for lib in (torch, ember):
        p = (torch.zeros(2) if lib is torch else ember.zeros(2)).requires_grad_(True)
        p.grad = (torch.tensor([float("nan"), 1.0]) if lib is torch
                  else ember.tensor([float("nan"), 1.0]))
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                               "`parameters` is non-finite"):
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        with pytest.warns(UserWarning, match="clip_grad_norm is now deprecated"):
            lib.nn.utils.clip_grad_norm([p], 1.0)


def test_clip_grad_value_matches_pytorch():
    g = np.linspace(-2, 2, 9)
    out = {}
    for lib in (torch, ember):
        p = (torch.zeros(9, dtype=torch.float64) if lib is torch
             else ember.zeros(9, dtype=ember.float64)).requires_grad_(True)
        p.grad = torch.tensor(g) if lib is torch else ember.from_numpy(g.copy())
        lib.nn.utils.clip_grad_value_(p, 0.7)
        out[lib] = N(p.grad)
    np.testing.assert_array_equal(out[ember], out[torch])


def test_parameters_to_vector_and_back():
    t, e = linear_pair()
    vt = torch.nn.utils.parameters_to_vector(t.parameters())
    ve = ember.nn.utils.parameters_to_vector(e.parameters())
    close(ve, vt)
    new = np.arange(vt.numel(), dtype=np.float64)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t.parameters())
    ember.nn.utils.vector_to_parameters(ember.from_numpy(new.copy()), e.parameters())
    close(e.weight, t.weight)
    close(e.bias, t.bias)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        ember.nn.utils.vector_to_parameters([1.0], e.parameters())


# --- weight_norm and spectral_norm (hooks) ---

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_pytorch(kind, dim):
    t, e = make_pair(kind)
    torch.nn.utils.weight_norm(t, dim=dim)
    ember.nn.utils.weight_norm(e, dim=dim)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    close(e.weight_g, t.weight_g)
    close(e.weight, t.weight)
    x = torch.randn(5, 4, dtype=torch.float64)
    forward_backward(t, e, x, steps=2)
    close(e.weight_g.grad, t.weight_g.grad)
    close(e.weight_v.grad, t.weight_v.grad)
    close(e.bias.grad, t.bias.grad)
    # An optimizer step on g and v moves the weight the next forward uses.
    for lib, m in ((torch, t), (ember, e)):
        lib.optim.SGD(m.parameters(), lr=0.1).step()
    forward_backward(t, e, x)

    torch.nn.utils.remove_weight_norm(t)
    ember.nn.utils.remove_weight_norm(e)
    assert sorted(n for n, _ in e.named_parameters()) == ["bias", "weight"]
    close(e.weight, t.weight)
    close(e(E(x)), t(x))


def test_weight_norm_errors_match_pytorch():
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.weight_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the "
                                               "same parameter weight"):
            lib.nn.utils.weight_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
            lib.nn.utils.remove_weight_norm(m, "bias")


def test_norm_except_dim_matches_pytorch():
    from ember.nn.utils.weight_norm import norm_except_dim, _weight_norm
    v = torch.randn(3, 4, 5, dtype=torch.float64)
    g = torch.randn(3, 1, 1, dtype=torch.float64)
    for dim in (0, 1, 2, -1):
        close(norm_except_dim(E(v), 2, dim), torch.norm_except_dim(v, 2, dim))
        gd = torch.norm_except_dim(v, 2, dim)
        close(_weight_norm(E(v), E(gd), dim), torch._weight_norm(v, gd, dim))
    close(_weight_norm(E(v), E(g), 0), torch._weight_norm(v, g, 0))


def copy_power_iteration(e, t, prefix="weight"):
    """spectral_norm starts from random u and v: ember takes torch's."""
    getattr(e, prefix + "_u").copy_(E(getattr(t, prefix + "_u")))
    getattr(e, prefix + "_v").copy_(E(getattr(t, prefix + "_v")))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_matches_pytorch(kind, n_power_iterations):
    t, e = make_pair(kind)
    torch.nn.utils.spectral_norm(t, n_power_iterations=n_power_iterations)
    ember.nn.utils.spectral_norm(e, n_power_iterations=n_power_iterations)
    copy_power_iteration(e, t)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    x = torch.randn(5, 4, dtype=torch.float64)
    forward_backward(t, e, x, steps=3)  # one power iteration (set) per call in training
    close(e.weight_orig.grad, t.weight_orig.grad)
    close(e.weight_u, t.weight_u)
    close(e.weight_v, t.weight_v)
    t.eval()
    e.eval()
    close(e(E(x)), t(x))  # no power iteration in eval mode
    close(e.weight_u, t.weight_u)
    torch.nn.utils.remove_spectral_norm(t)
    ember.nn.utils.remove_spectral_norm(e)
    assert sorted(n for n, _ in e.named_parameters()) == ["bias", "weight"]
    assert [n for n, _ in e.named_buffers()] == []
    close(e.weight, t.weight)


def test_spectral_norm_on_a_conv_weight():
    torch.manual_seed(3)
    t = torch.nn.Conv2d(2, 3, 3).double()
    e = ember.nn.Conv2d(2, 3, 3).double()
    e.load_state_dict({k: E(v) for k, v in t.state_dict().items()})
    torch.nn.utils.spectral_norm(t)
    ember.nn.utils.spectral_norm(e)
    copy_power_iteration(e, t)
    x = torch.randn(2, 2, 6, 6, dtype=torch.float64)
    forward_backward(t, e, x, steps=2)
    close(e.weight_orig.grad, t.weight_orig.grad)


def test_spectral_norm_errors_match_pytorch():
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(m, n_power_iterations=0)
        lib.nn.utils.spectral_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
            lib.nn.utils.remove_spectral_norm(m, "bias")


# --- parametrize ---

def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def scale(lib, factor):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * factor

        def right_inverse(self, A):
            return A / factor
    return Scale()


def rank_one(lib):
    class RankOne(lib.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0, :].clone() / Z[0, 0]
    return RankOne()


@pytest.mark.parametrize("kind", KINDS)
def test_register_parametrization_matches_pytorch(kind):
    t, e = make_pair(kind)
    # Square weights for Symmetric.
    with torch.no_grad():
        t.weight = torch.nn.Parameter(t.weight[:, :3].clone())
    e.weight = ember.nn.Parameter(E(t.weight))
    orig_t, orig_e = type(t), type(e)
    TP.register_parametrization(t, "weight", symmetric(torch))
    EP.register_parametrization(e, "weight", symmetric(ember))
    assert type(e).__name__ == type(t).__name__ == "Parametrized" + orig_t.__name__
    assert isinstance(e, orig_e)
    assert EP.type_before_parametrizations(e) is orig_e
    assert EP.is_parametrized(e) and EP.is_parametrized(e, "weight")
    assert not EP.is_parametrized(e, "bias")
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert isinstance(e.parametrizations.weight.original, ember.nn.Parameter)
    close(e.weight, t.weight)
    np.testing.assert_array_equal(N(e.weight), N(e.weight).T)

    x = torch.randn(5, 3, dtype=torch.float64)
    forward_backward(t, e, x)
    close(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)

    # Chaining a second parametrization, assigning through right_inverse, caching.
    TP.register_parametrization(t, "weight", scale(torch, 3.0))
    EP.register_parametrization(e, "weight", scale(ember, 3.0))
    close(e.weight, t.weight)
    A = torch.randn(3, 3, dtype=torch.float64)
    A = A + A.T
    t.weight = A
    e.weight = E(A)
    close(e.parametrizations.weight.original, t.parametrizations.weight.original)
    close(e.weight, A)
    with EP.cached():
        assert e.weight is e.weight
    assert e.weight is not e.weight

    # An optimizer holding the original keeps working after removal (same tensor).
    opt = ember.optim.SGD(e.parameters(), lr=0.1)
    TP.remove_parametrizations(t, "weight", leave_parametrized=True)
    EP.remove_parametrizations(e, "weight", leave_parametrized=True)
    assert type(e) is orig_e and not EP.is_parametrized(e)
    # PyTorch registers the restored parameter last; ember's emptied slot kept its place.
    assert sorted(n for n, _ in e.named_parameters()) == \
        sorted(n for n, _ in t.named_parameters())
    close(e.weight, t.weight)
    close(e(E(x)), t(x))
    e.zero_grad()
    (e(E(x)) ** 2).sum().backward()
    before = N(e.weight).copy()
    opt.step()
    np.testing.assert_allclose(N(e.weight), before - 0.1 * N(e.weight.grad), rtol=1e-12)


def test_remove_parametrizations_leaving_the_original():
    for lib, P in ((torch, TP), (ember, EP)):
        m = lib.nn.Linear(3, 3).double()
        P.register_parametrization(m, "weight", scale(lib, 2.0))
        before = N(m.parametrizations.weight.original).copy()
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        np.testing.assert_array_equal(N(m.weight), before)


def test_parametrization_with_several_originals():
    t, e = linear_pair(3, 3)
    TP.register_parametrization(t, "weight", rank_one(torch))
    EP.register_parametrization(e, "weight", rank_one(ember))
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    close(e.weight, t.weight)
    x = torch.randn(4, 3, dtype=torch.float64)
    forward_backward(t, e, x)
    close(e.parametrizations.weight.original0.grad, t.parametrizations.weight.original0.grad)
    close(e.parametrizations.weight.original1.grad, t.parametrizations.weight.original1.grad)
    for lib, P, m in ((torch, TP, t), (ember, EP, e)):
        with pytest.raises(ValueError, match="Cannot leave unparametrized"):
            P.remove_parametrizations(m, "weight", leave_parametrized=False)
    TP.remove_parametrizations(t, "weight")
    EP.remove_parametrizations(e, "weight")
    close(e.weight, t.weight)


def test_parametrize_a_buffer():
    for lib, P in ((torch, TP), (ember, EP)):
        m = lib.nn.Module()
        m.register_buffer("b", (torch.arange(3.0) if lib is torch else ember.arange(3.0)))
        P.register_parametrization(m, "b", scale(lib, 2.0))
        assert [n for n, _ in m.named_buffers()] == ["parametrizations.b.original"]
        np.testing.assert_array_equal(N(m.parametrizations.b.original), [0.0, 0.5, 1.0])
        np.testing.assert_array_equal(N(m.b), [0.0, 1.0, 2.0])


def test_parametrize_errors_match_pytorch():
    class Bad:
        @staticmethod
        def make(lib, what):
            class M(lib.nn.Module):
                def forward(self, X):
                    return X.float() if what == "dtype" else X[:1]
            return M()

    for lib, P in ((torch, TP), (ember, EP)):
        m = lib.nn.Linear(3, 3).double()
        with pytest.raises(ValueError, match="Registering a parametrization may not change the "
                                             "dtype of the tensor"):
            P.register_parametrization(m, "weight", Bad.make(lib, "dtype"))
        with pytest.raises(ValueError, match="Registering a parametrization may not change the "
                                             "shape of the tensor"):
            P.register_parametrization(m, "weight", Bad.make(lib, "shape"))
        assert not P.is_parametrized(m)  # an error leaves the module as it was
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'nope'"):
            P.register_parametrization(m, "nope", scale(lib, 2.0))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", scale(lib, 2.0))
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                               "supported through state_dict()"):
            pickle.dumps(m)
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            m.weight = lib.nn.Parameter(torch.zeros(3, 3) if lib is torch else ember.zeros(3, 3))


@pytest.mark.parametrize("kind", KINDS)
def test_deepcopy_of_a_parametrized_module(kind):
    _, e = make_pair(kind)
    EP.register_parametrization(e, "weight", scale(ember, 2.0))
    c = copy.deepcopy(e)
    assert type(c) is type(e)
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in e.named_parameters()]
    np.testing.assert_array_equal(N(c.weight), N(e.weight))
    with ember.no_grad():
        c.parametrizations.weight.original.add_(1.0)
    assert not np.array_equal(N(c.weight), N(e.weight))  # its own tensors
    x = ember.randn(2, 4, dtype=ember.float64)
    np.testing.assert_allclose(N(c(x)), N(x) @ N(c.weight).T + N(c.bias), rtol=1e-12)


def test_transfer_parametrizations_and_params():
    src = ember.nn.Linear(3, 3).double()
    EP.register_parametrization(src, "weight", scale(ember, 2.0))
    dst = ember.nn.Linear(3, 3).double()
    EP.transfer_parametrizations_and_params(src, dst)
    assert EP.is_parametrized(dst, "weight")
    np.testing.assert_array_equal(N(dst.weight), N(src.weight))


# --- parametrizations ---

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_matches_pytorch(shape, orthogonal_map, use_trivialization):
    torch.manual_seed(1)
    out_features, in_features = shape
    t, e = linear_pair(in_features, out_features)
    TPZ.orthogonal(t, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    EPZ.orthogonal(e, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    # Completing a thin matrix (trivialization) draws random columns: take torch's state.
    e.parametrizations.weight.original.data = E(t.parametrizations.weight.original)
    if use_trivialization:
        e.parametrizations.weight[0].base = E(t.parametrizations.weight[0].base)
    W = N(e.weight)
    Q = W if W.shape[0] >= W.shape[1] else W.T
    np.testing.assert_allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-12)
    close(e.weight, t.weight)
    x = torch.randn(4, in_features, dtype=torch.float64)
    forward_backward(t, e, x)
    close(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad,
          rtol=1e-9, atol=1e-11)


def test_orthogonal_assignment_and_errors_match_pytorch():
    torch.manual_seed(2)
    t, e = linear_pair(4, 4)
    TPZ.orthogonal(t)
    EPZ.orthogonal(e)
    Q, _ = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64))
    t.weight = Q
    e.weight = E(Q)
    close(e.weight, Q, atol=1e-12)
    for lib, P in ((torch, TPZ), (ember, EPZ)):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                             "tensor of 1 dimensions."):
            P.orthogonal(lib.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                             '"cayley", "householder". Got: qr'):
            P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        m = P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
        with pytest.raises(NotImplementedError, match="It is not possible to assign to the "
                                                      "matrix exponential or the Cayley"):
            m.weight = torch.eye(3) if lib is torch else ember.eye(3)


@pytest.mark.parametrize("kind", KINDS)
def test_spectral_norm_parametrization_matches_pytorch(kind):
    t, e = make_pair(kind)
    TPZ.spectral_norm(t)
    EPZ.spectral_norm(e)
    sn_t, sn_e = t.parametrizations.weight[0], e.parametrizations.weight[0]
    sn_e._u.copy_(E(sn_t._u))
    sn_e._v.copy_(E(sn_t._v))
    assert list(e.state_dict()) == list(t.state_dict())
    x = torch.randn(5, 4, dtype=torch.float64)
    forward_backward(t, e, x, steps=3)
    close(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    close(sn_e._u, sn_t._u)
    close(sn_e._v, sn_t._v)
    t.eval()
    e.eval()
    close(e(E(x)), t(x))
    close(sn_e._u, sn_t._u)  # no power iteration in eval mode
    assert float(ember.linalg.matrix_norm(e.weight, 2)) == pytest.approx(1.0, abs=1e-2)


def test_spectral_norm_parametrization_of_a_vector():
    e = ember.nn.Linear(3, 2).double()
    EPZ.spectral_norm(e, "bias")
    b = N(e.parametrizations.bias.original)
    np.testing.assert_allclose(N(e.bias), b / np.linalg.norm(b), rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(kind, dim):
    # PyTorch 1.13 has no parametrizations.weight_norm: compare with the hook-based one, whose
    # g and v are the parametrization's original0 and original1 (PyTorch 2.x's definition).
    t, e = make_pair(kind)
    torch.nn.utils.weight_norm(t, dim=dim)
    EPZ.weight_norm(e, dim=dim)
    assert [n for n, _ in e.named_parameters()] == \
        ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    close(e.parametrizations.weight.original0, t.weight_g)
    close(e.parametrizations.weight.original1, t.weight_v)
    x = torch.randn(5, 4, dtype=torch.float64)
    forward_backward(t, e, x)
    close(e.parametrizations.weight.original0.grad, t.weight_g.grad)
    close(e.parametrizations.weight.original1.grad, t.weight_v.grad)
    EP.remove_parametrizations(e, "weight")
    torch.nn.utils.remove_weight_norm(t)
    close(e.weight, t.weight)


# --- fusion ---

def bn_pair(lib, bn_cls, n):
    torch.manual_seed(4)
    tb = getattr(torch.nn, bn_cls)(n, eps=1e-3).double()
    with torch.no_grad():
        tb.running_mean.uniform_(-1, 1)
        tb.running_var.uniform_(0.5, 2)
        tb.weight.uniform_(0.5, 1.5)
        tb.bias.uniform_(-1, 1)
    eb = getattr(ember.nn, bn_cls)(n, eps=1e-3).double()
    eb.load_state_dict({k: E(v) for k, v in tb.state_dict().items()})
    return tb.eval(), eb.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval_matches_pytorch(bias):
    torch.manual_seed(5)
    tc = torch.nn.Conv2d(3, 4, 3, bias=bias).double().eval()
    ec = ember.nn.Conv2d(3, 4, 3, bias=bias).double().eval()
    ec.load_state_dict({k: E(v) for k, v in tc.state_dict().items()})
    tb, eb = bn_pair(None, "BatchNorm2d", 4)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb)
    ef = ember.nn.utils.fuse_conv_bn_eval(ec, eb)
    assert type(ef) is type(ec)
    close(ef.weight, tf.weight)
    close(ef.bias, tf.bias)
    x = torch.randn(2, 3, 7, 7, dtype=torch.float64)
    close(ef(E(x)), tf(x))
    close(ef(E(x)), tb(tc(x)), rtol=1e-10, atol=1e-12)
    for lib, c, b in ((torch, tc, tb), (ember, ec, eb)):
        c.train()
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(c, b)


def test_fuse_conv_transpose_bn_eval():
    torch.manual_seed(6)
    tc = torch.nn.ConvTranspose2d(3, 4, 3).double().eval()
    ec = ember.nn.ConvTranspose2d(3, 4, 3).double().eval()
    ec.load_state_dict({k: E(v) for k, v in tc.state_dict().items()})
    tb, eb = bn_pair(None, "BatchNorm2d", 4)
    ef = ember.nn.utils.fuse_conv_bn_eval(ec, eb, transpose=True)
    x = torch.randn(2, 3, 5, 5, dtype=torch.float64)
    close(ef(E(x)), tb(tc(x)), rtol=1e-10, atol=1e-12)


def test_fuse_linear_bn_eval_matches_pytorch():
    from torch.nn.utils.fusion import fuse_linear_bn_eval
    t, e = linear_pair(3, 4)
    t.eval()
    e.eval()
    tb, eb = bn_pair(None, "BatchNorm1d", 4)
    tf = fuse_linear_bn_eval(t, tb)
    ef = ember.nn.utils.fuse_linear_bn_eval(e, eb)
    x = torch.randn(5, 3, dtype=torch.float64)
    close(ef(E(x)), tf(x))
    close(ef(E(x)), tb(t(x)), rtol=1e-10, atol=1e-12)
    w, b = ember.nn.utils.fuse_linear_bn_weights(e.weight, None, eb.running_mean,
                                                  eb.running_var, 1e-3, eb.weight, eb.bias)
    tw, tbias = torch.nn.utils.fusion.fuse_linear_bn_weights(t.weight, None, tb.running_mean,
                                                            tb.running_var, 1e-3, tb.weight,
                                                            tb.bias)
    close(w, tw)
    close(b, tbias)


# --- stateless ---

@pytest.mark.parametrize("kind", KINDS)
def test_functional_call_matches_pytorch(kind):
    from torch.nn.utils.stateless import functional_call as tfc
    from ember.nn.utils.stateless import functional_call as efc
    t, e = make_pair(kind)
    W = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    eW = E(W).requires_grad_(True)
    x = torch.randn(5, 4, dtype=torch.float64)
    yt = tfc(t, {"weight": W}, (x,))
    ye = efc(e, {"weight": eW}, (E(x),))
    close(ye, yt)
    (yt ** 2).sum().backward()
    (ye ** 2).sum().backward()
    close(eW.grad, W.grad)
    assert e.weight.grad is None  # the module's own weight was not used
    # The module is as before.
    close(e(E(x)), t(x))
    assert [n for n, _ in e.named_parameters()] == ["weight", "bias"]
    # args not a tuple, kwargs, an iterable of pairs.
    close(efc(e, [("bias", ember.zeros(3, dtype=ember.float64))], E(x)),
          tfc(t, {"bias": torch.zeros(3, dtype=torch.float64)}, x))


def test_functional_call_through_a_cpp_sequential():
    from ember.nn.utils.stateless import functional_call
    torch.manual_seed(7)
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).double()
    e = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU(), ember.nn.Linear(3, 2)).double()
    e.load_state_dict({k: E(v) for k, v in t.state_dict().items()})
    new = {k: torch.randn_like(v) for k, v in t.state_dict().items()}
    x = torch.randn(5, 4, dtype=torch.float64)
    yt = torch.nn.utils.stateless.functional_call(t, new, (x,))
    ye = functional_call(e, {k: E(v) for k, v in new.items()}, (E(x),), strict=True)
    close(ye, yt)
    close(e(E(x)), t(x))


def test_functional_call_buffers_and_write_back():
    from ember.nn.utils.stateless import functional_call

    class Counter(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("foo", ember.zeros(()))

        def forward(self, x):
            self.foo = self.foo + 1
            return x + self.foo

    m = Counter()
    given = {"foo": ember.ones(())}
    out = functional_call(m, given, ember.zeros(()))
    assert float(out) == 2.0
    assert float(m.foo) == 0.0  # the module keeps its own buffer
    assert float(given["foo"]) == 2.0  # what the module assigned comes back, as in PyTorch


def test_functional_call_tied_weights_and_strict():
    from ember.nn.utils.stateless import functional_call

    class Tied(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ember.nn.Linear(3, 3, bias=False)
            self.b = ember.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    x = ember.randn(2, 3)
    w = ember.eye(3)
    np.testing.assert_allclose(N(functional_call(m, {"a.weight": w}, x)), N(x), rtol=1e-6)
    untied = functional_call(m, {"a.weight": w}, x, tie_weights=False)
    np.testing.assert_allclose(N(untied), N(x) @ N(m.b.weight).T, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"functional_call got multiple values for keys "
                                         r"\['a.weight', 'b.weight'\], which are tied"):
        functional_call(m, {"a.weight": w, "b.weight": 2 * w}, x)
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Tied:\n\t"
                                           r"Unexpected key\(s\): 'c'."):
        functional_call(m, {"a.weight": w, "c": w}, x, strict=True)
    with pytest.raises(ValueError, match=r"\['a.weight'\] appeared multiple times"):
        functional_call(m, [("a.weight", w), ("a.weight", w)], x)


# --- skip_init, memory format, names ---

def test_skip_init():
    m = ember.nn.utils.skip_init(ember.nn.Linear, 5, 2)
    assert type(m) is ember.nn.Linear and tuple(m.weight.shape) == (2, 5)
    m = ember.nn.utils.skip_init(ember.nn.Linear, in_features=6, out_features=1, device="cpu")
    assert tuple(m.weight.shape) == (1, 6)
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        ember.nn.utils.skip_init(int)

    class NoDevice(ember.nn.Module):
        def __init__(self, n):
            super().__init__()

    for lib, cls in ((torch, torch.nn.ReLU), (ember, NoDevice)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            lib.nn.utils.skip_init(cls, 1)


def test_convert_conv2d_weight_memory_format():
    m = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Linear(2, 2))
    out = ember.nn.utils.convert_conv2d_weight_memory_format(m, ember.channels_last)
    assert out is m
    assert m[0].weight.is_contiguous(memory_format=ember.channels_last)
    assert not m[0].weight.is_contiguous()
    assert m[2].weight.is_contiguous()


def test_names_match_pytorch():
    import importlib
    for name in ["nn.utils", "nn.utils.parametrize", "nn.utils.parametrizations",
                 "nn.utils.stateless", "nn.utils.fusion", "nn.utils.clip_grad",
                 "nn.utils.convert_parameters", "nn.utils.init", "nn.utils.memory_format",
                 "nn.utils.weight_norm", "nn.utils.spectral_norm"]:
        theirs = importlib.import_module("torch." + name)
        ours = importlib.import_module("ember." + name)
        for n in getattr(theirs, "__all__", []):
            if n in ("SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook"):
                continue  # state-dict hooks ember's modules do not have (spectral_norm.py)
            assert hasattr(ours, n), (name, n)
    for n in dir(torch.nn.utils):
        if not n.startswith("_"):
            assert hasattr(ember.nn.utils, n), n
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.nn.utils.clip_grad_norm_(iter([ember.ones(1, requires_grad=True)]), 1.0) \
            is not None
