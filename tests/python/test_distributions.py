"""ember.distributions against torch.distributions 1.13, in float64: every family built with the
same parameters in both libraries, compared on shapes, moments, log_prob (and its gradients),
cdf/icdf, entropy, enumerate_support, expand, sample shapes and dtypes, and rsample with the same
noise (torch's noise sources replay the draws ember made) and its gradients; transforms,
constraints, biject_to/transform_to, every KL pair PyTorch registers, validation messages; the
samplers ember writes itself (gamma, Dirichlet, Poisson, binomial) by their distributions; and
torch.serialization's safe_globals."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember
import ember.distributions as ED
from ember.distributions import utils as EU

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

RTOL, ATOL = 1e-9, 1e-12


def _np(x):
    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def close(a, b, rtol=RTOL, atol=ATOL):
    """Equal values (nan where nan, inf where inf) and shapes."""
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True)


def both(fn):
    """fn's result, or the type of the exception it raises."""
    try:
        return fn()
    except (NotImplementedError, ValueError, AssertionError) as e:
        return type(e)


def same(torch_fn, ember_fn, **tolerance):
    """Both raise the same exception type, or give close values; returns torch's outcome."""
    tv, ev = both(torch_fn), both(ember_fn)
    if isinstance(tv, type):
        assert ev is tv, ev
    else:
        close(ev, tv, **tolerance)
    return tv


class Lib:
    """One library's side of a case: its distributions module and a numpy -> tensor map."""

    def __init__(self, name):
        self.name = name
        self.D = TD if name == "torch" else ED
        self.T = torch.from_numpy if name == "torch" else ember.from_numpy

    def tensor(self, x, grad=False):
        t = self.T(np.array(x, dtype=np.float64))
        return t.requires_grad_() if grad else t


TORCH, EMBER = Lib("torch"), Lib("ember")
rng = np.random.RandomState(0)


def _pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


def _simplex(*shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _spd(*shape):
    a = rng.randn(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


# name -> (build(lib, params) -> distribution, float parameters (differentiated), constants)
CASES = {
    "Normal": (lambda L, p: L.D.Normal(p["loc"], p["scale"]),
               dict(loc=rng.randn(2, 3), scale=_pos(3))),
    "Uniform": (lambda L, p: L.D.Uniform(p["low"], p["low"] + p["width"]),
                dict(low=rng.randn(3), width=_pos(3))),
    "Exponential": (lambda L, p: L.D.Exponential(p["rate"]), dict(rate=_pos(3))),
    "Cauchy": (lambda L, p: L.D.Cauchy(p["loc"], p["scale"]), dict(loc=rng.randn(3),
                                                                   scale=_pos(3))),
    "Laplace": (lambda L, p: L.D.Laplace(p["loc"], p["scale"]), dict(loc=rng.randn(3),
                                                                     scale=_pos(3))),
    "Gamma": (lambda L, p: L.D.Gamma(p["concentration"], p["rate"]),
              dict(concentration=[0.3, 1.5, 9.0], rate=_pos(3))),
    "Chi2": (lambda L, p: L.D.Chi2(p["df"]), dict(df=[0.7, 3.0, 20.0])),
    "Beta": (lambda L, p: L.D.Beta(p["c1"], p["c0"]), dict(c1=[0.5, 2.0, 7.5],
                                                           c0=[1.5, 0.8, 8.0])),
    "Dirichlet": (lambda L, p: L.D.Dirichlet(p["concentration"]),
                  dict(concentration=_pos(2, 4))),
    "StudentT": (lambda L, p: L.D.StudentT(p["df"], p["loc"], p["scale"]),
                 dict(df=[0.8, 1.5, 5.0], loc=rng.randn(3), scale=_pos(3))),
    "FisherSnedecor": (lambda L, p: L.D.FisherSnedecor(p["df1"], p["df2"]),
                       dict(df1=[1.5, 3.0, 6.0], df2=[1.5, 3.5, 9.0])),
    "HalfNormal": (lambda L, p: L.D.HalfNormal(p["scale"]), dict(scale=_pos(3))),
    "HalfCauchy": (lambda L, p: L.D.HalfCauchy(p["scale"]), dict(scale=_pos(3))),
    "LogNormal": (lambda L, p: L.D.LogNormal(p["loc"], p["scale"]), dict(loc=rng.randn(3),
                                                                         scale=_pos(3))),
    "Gumbel": (lambda L, p: L.D.Gumbel(p["loc"], p["scale"]), dict(loc=rng.randn(3),
                                                                   scale=_pos(3))),
    "Pareto": (lambda L, p: L.D.Pareto(p["scale"], p["alpha"]),
               dict(scale=_pos(3), alpha=[0.8, 1.5, 3.0])),
    "Weibull": (lambda L, p: L.D.Weibull(p["scale"], p["concentration"]),
                dict(scale=_pos(3), concentration=[0.7, 1.5, 3.0])),
    "Kumaraswamy": (lambda L, p: L.D.Kumaraswamy(p["c1"], p["c0"]),
                    dict(c1=[0.7, 2.0, 3.0], c0=[1.5, 0.6, 2.5])),
    "LogisticNormal": (lambda L, p: L.D.LogisticNormal(p["loc"], p["scale"]),
                       dict(loc=rng.randn(2, 3), scale=_pos(2, 3))),
    "ContinuousBernoulli": (lambda L, p: L.D.ContinuousBernoulli(p["probs"]),
                            dict(probs=[0.2, 0.4995, 0.8])),
    "ContinuousBernoulli_logits": (lambda L, p: L.D.ContinuousBernoulli(logits=p["logits"]),
                                   dict(logits=[-1.5, 0.001, 2.0])),
    "Bernoulli": (lambda L, p: L.D.Bernoulli(p["probs"]), dict(probs=[0.2, 0.5, 0.9])),
    "Bernoulli_logits": (lambda L, p: L.D.Bernoulli(logits=p["logits"]),
                         dict(logits=[-2.0, 0.0, 1.5])),
    "Binomial": (lambda L, p: L.D.Binomial(10, p["probs"]), dict(probs=[0.2, 0.5, 0.9])),
    "Binomial_counts": (lambda L, p: L.D.Binomial(p["n"], logits=p["logits"]),
                        dict(logits=rng.randn(2, 3)), dict(n=[[3.0], [7.0]])),
    "Categorical": (lambda L, p: L.D.Categorical(p["probs"]), dict(probs=_simplex(2, 4))),
    "Categorical_logits": (lambda L, p: L.D.Categorical(logits=p["logits"]),
                           dict(logits=rng.randn(2, 4))),
    "OneHotCategorical": (lambda L, p: L.D.OneHotCategorical(p["probs"]),
                          dict(probs=_simplex(2, 4))),
    "OneHotCategoricalStraightThrough": (
        lambda L, p: L.D.OneHotCategoricalStraightThrough(logits=p["logits"]),
        dict(logits=rng.randn(3))),
    "Geometric": (lambda L, p: L.D.Geometric(p["probs"]), dict(probs=[0.2, 0.5, 0.9])),
    "Geometric_logits": (lambda L, p: L.D.Geometric(logits=p["logits"]),
                         dict(logits=[-1.0, 0.5, 2.0])),
    "Poisson": (lambda L, p: L.D.Poisson(p["rate"]), dict(rate=[0.5, 4.0, 30.0])),
    "NegativeBinomial": (lambda L, p: L.D.NegativeBinomial(p["n"], p["probs"]),
                         dict(n=[2.0, 5.5, 0.5], probs=[0.3, 0.6, 0.1])),
    "NegativeBinomial_logits": (lambda L, p: L.D.NegativeBinomial(p["n"], logits=p["logits"]),
                                dict(n=[2.0, 5.5, 0.5], logits=[-1.0, 0.3, 1.2])),
    "Multinomial": (lambda L, p: L.D.Multinomial(6, p["probs"]), dict(probs=_simplex(2, 4))),
    "MultivariateNormal": (lambda L, p: L.D.MultivariateNormal(
        p["loc"], covariance_matrix=p["cov"]), dict(loc=rng.randn(2, 3), cov=_spd(3, 3))),
    "MultivariateNormal_tril": (lambda L, p: L.D.MultivariateNormal(
        p["loc"], scale_tril=p["tril"]), dict(loc=rng.randn(3),
                                              tril=np.linalg.cholesky(_spd(2, 3, 3)))),
    "MultivariateNormal_precision": (lambda L, p: L.D.MultivariateNormal(
        p["loc"], precision_matrix=p["prec"]), dict(loc=rng.randn(2, 3), prec=_spd(2, 3, 3))),
    "LowRankMultivariateNormal": (lambda L, p: L.D.LowRankMultivariateNormal(
        p["loc"], p["factor"], p["diag"]),
        dict(loc=rng.randn(2, 3), factor=rng.randn(3, 2), diag=_pos(2, 3))),
    "Independent": (lambda L, p: L.D.Independent(L.D.Normal(p["loc"], p["scale"]), 1),
                    dict(loc=rng.randn(2, 3), scale=_pos(2, 3))),
    "MixtureSameFamily": (lambda L, p: L.D.MixtureSameFamily(
        L.D.Categorical(p["probs"]), L.D.Normal(p["loc"], p["scale"])),
        dict(probs=_simplex(2, 3), loc=rng.randn(2, 3), scale=_pos(2, 3))),
    "MixtureSameFamily_mvn": (lambda L, p: L.D.MixtureSameFamily(
        L.D.Categorical(logits=p["logits"]),
        L.D.Independent(L.D.Normal(p["loc"], p["scale"]), 1)),
        dict(logits=rng.randn(2, 3), loc=rng.randn(2, 3, 2), scale=_pos(2, 3, 2))),
    "RelaxedBernoulli": (lambda L, p: L.D.RelaxedBernoulli(p["t"], p["probs"]),
                         dict(t=0.7, probs=[0.2, 0.5, 0.9])),
    "LogitRelaxedBernoulli": (lambda L, p: L.D.relaxed_bernoulli.LogitRelaxedBernoulli(
        p["t"], logits=p["logits"]), dict(t=1.3, logits=[-1.0, 0.5, 2.0])),
    "RelaxedOneHotCategorical": (lambda L, p: L.D.RelaxedOneHotCategorical(
        p["t"], p["probs"]), dict(t=0.6, probs=_simplex(2, 4))),
    "ExpRelaxedCategorical": (lambda L, p: L.D.relaxed_categorical.ExpRelaxedCategorical(
        p["t"], logits=p["logits"]), dict(t=0.9, logits=rng.randn(3))),
    "VonMises": (lambda L, p: L.D.VonMises(p["loc"], p["concentration"]),
                 dict(loc=rng.randn(3), concentration=[0.5, 2.0, 10.0])),
    "LKJCholesky": (lambda L, p: L.D.LKJCholesky(3, p["concentration"]),
                    dict(concentration=[0.5, 1.0, 3.0])),
    "Wishart": (lambda L, p: L.D.Wishart(p["df"], covariance_matrix=p["cov"]),
                dict(df=[4.0, 5.5], cov=_spd(2, 3, 3))),
    "Wishart_tril": (lambda L, p: L.D.Wishart(p["df"], scale_tril=p["tril"]),
                     dict(df=3.5, tril=np.linalg.cholesky(_spd(3, 3)))),
    "TransformedDistribution": (lambda L, p: L.D.TransformedDistribution(
        L.D.Normal(p["loc"], p["scale"]),
        [L.D.AffineTransform(1.0, p["a"]), L.D.ExpTransform()]),
        dict(loc=rng.randn(3), scale=_pos(3), a=[-2.0, 0.5, 1.5])),
}


def build(L, name):
    make, params, *consts = CASES[name]
    leaves = {k: L.tensor(v, grad=True) for k, v in params.items()}
    args = dict(leaves)
    for k, v in (consts[0] if consts else {}).items():
        args[k] = L.tensor(v)
    return make(L, args), leaves


def grads(out, leaves):
    """d out.sum() / d leaf, for each leaf (zeros where out does not depend on it)."""
    names = list(leaves)
    lib = torch if isinstance(out, torch.Tensor) else ember
    gs = lib.autograd.grad(out.sum(), [leaves[n] for n in names], allow_unused=True)
    return {n: (np.zeros(tuple(leaves[n].shape)) if g is None else _np(g))
            for n, g in zip(names, gs)}


def torch_points(d, n=2):
    """Points to score: torch's own samples (so within the support)."""
    torch.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _np(d.sample((n,)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_family_matches_torch(name):
    td, tleaves = build(TORCH, name)
    ed, eleaves = build(EMBER, name)
    assert tuple(ed.batch_shape) == tuple(td.batch_shape)
    assert tuple(ed.event_shape) == tuple(td.event_shape)
    assert ed.has_rsample == td.has_rsample
    assert ed.has_enumerate_support == td.has_enumerate_support
    assert type(ed.support).__name__ == type(td.support).__name__
    assert ed.support.event_dim == td.support.event_dim
    assert ed.support.is_discrete == td.support.is_discrete

    for prop in ("mean", "variance", "stddev", "mode"):
        same(lambda: getattr(td, prop), lambda: getattr(ed, prop))
    if not isinstance(same(td.entropy, ed.entropy), type):
        close(ed.perplexity(), td.perplexity(), rtol=1e-8)

    x = torch_points(td)
    tl, el = td.log_prob(TORCH.tensor(x)), ed.log_prob(EMBER.tensor(x))
    close(el, tl)
    tg, eg = grads(tl, tleaves), grads(el, eleaves)
    for k in tg:
        if k == "tril":  # only the factor's lower triangle is read: torch's cholesky_solve
            tg[k], eg[k] = np.tril(tg[k]), np.tril(eg[k])  # leaves a gradient above it
        close(eg[k], tg[k], rtol=1e-8, atol=1e-10)

    for method, points in (("cdf", x), ("icdf", rng.uniform(0.05, 0.95, tuple(td.batch_shape)))):
        same(lambda: getattr(td, method)(TORCH.tensor(points)),
             lambda: getattr(ed, method)(EMBER.tensor(points)), rtol=1e-8)

    if td.has_enumerate_support:
        for expand in (True, False):
            tv = same(lambda: td.enumerate_support(expand), lambda: ed.enumerate_support(expand))
            if not isinstance(tv, type):
                ev = ed.enumerate_support(expand)
                assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1]

    shape = (4,) + tuple(td.batch_shape)
    te, ee = td.expand(shape), ed.expand(shape)
    assert type(ee) is type(ed) and tuple(ee.batch_shape) == tuple(te.batch_shape)
    assert tuple(ee.event_shape) == tuple(te.event_shape)
    close(ee.log_prob(EMBER.tensor(x[0])), te.log_prob(TORCH.tensor(x[0])))

    es = ed.sample((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = td.sample((2, 3))
    assert tuple(es.shape) == tuple(ts.shape)
    assert str(es.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    assert not es.requires_grad
    assert bool(ed.support.check(es).all())


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_parameters(name):
    """Parameters of the default dtype keep it (samples, log_prob), and agree with torch to
    float32 precision."""
    make, params, *consts = CASES[name]

    def build32(L):
        leaves = {k: L.T(np.array(v, dtype=np.float32)).requires_grad_()
                  for k, v in params.items()}
        args = dict(leaves, **{k: L.T(np.array(v, dtype=np.float32))
                               for k, v in (consts[0] if consts else {}).items()})
        return make(L, args), leaves

    (td, _), (ed, eleaves) = build32(TORCH), build32(EMBER)
    x = torch_points(td)
    el = ed.log_prob(ember.from_numpy(x))
    assert el.dtype == ember.float32
    close(el, td.log_prob(torch.from_numpy(x)), rtol=2e-4, atol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = td.sample((3,))
    assert str(ed.sample((3,)).dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    if td.has_rsample:
        for g in grads(ed.rsample((4,)), eleaves).values():
            assert np.isfinite(g).all()


# ----------------------------------------------------------------------------------------------
# rsample with the same noise: ember's draws are recorded, torch's noise sources replay them.

class _ReplayGamma(torch.autograd.Function):
    """torch._standard_gamma with a given draw: same value, torch's derivative formula."""

    @staticmethod
    def forward(ctx, alpha, x):
        ctx.save_for_backward(alpha, x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * torch._standard_gamma_grad(alpha, x), None


class Noise:
    """Records the noise ember's rsample draws, per source, and replays it to torch's."""

    SOURCES = ("normal", "rand", "exponential_", "cauchy_", "uniform_", "gamma", "dirichlet")

    def __init__(self, monkeypatch):
        self.mp = monkeypatch
        self.queues = {s: [] for s in self.SOURCES}
        self.depth = 0

    def _record(self, source, fn):
        def wrapped(*args, **kwargs):
            self.depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                self.depth -= 1
            if self.depth == 0:  # not a draw made inside another recorded sampler
                self.queues[source].append(_np(out).copy())
            return out
        return wrapped

    def record_ember(self):
        for module in ("normal", "multivariate_normal", "lowrank_multivariate_normal",
                       "studentT"):
            mod = getattr(ED, module)
            self.mp.setattr(mod, "_standard_normal", self._record("normal", mod._standard_normal))
        self.mp.setattr(ember, "rand", self._record("rand", ember.rand))
        for method in ("exponential_", "cauchy_", "uniform_"):
            self.mp.setattr(ember.Tensor, method,
                            self._record(method, getattr(ember.Tensor, method)))
        self.mp.setattr(EU, "_sample_standard_gamma",
                        self._record("gamma", EU._sample_standard_gamma))
        self.mp.setattr(ED.dirichlet, "_sample_dirichlet",
                        self._record("dirichlet", ED.dirichlet._sample_dirichlet))

    def _next(self, source, shape=None):
        value = torch.from_numpy(self.queues[source].pop(0))
        assert shape is None or tuple(value.shape) == tuple(shape)
        return value

    def replay_torch(self):
        for module in ("normal", "multivariate_normal", "lowrank_multivariate_normal",
                       "studentT"):
            self.mp.setattr(getattr(TD, module), "_standard_normal",
                            lambda shape, dtype, device: self._next("normal", shape))
        self.mp.setattr(torch, "rand", lambda shape, **kw: self._next("rand", shape))
        for method in ("exponential_", "cauchy_", "uniform_"):
            self.mp.setattr(torch.Tensor, method,
                            lambda t, *a, _m=method, **k: t.copy_(self._next(_m, t.shape)))
        self.mp.setattr(TD.gamma, "_standard_gamma",
                        lambda alpha: _ReplayGamma.apply(alpha, self._next("gamma", alpha.shape)))
        self.mp.setattr(torch, "_sample_dirichlet",
                        lambda conc: self._next("dirichlet", conc.shape))

    def used_up(self):
        return all(not q for q in self.queues.values())


def _reparameterized(name):
    """has_rsample, or an rsample of its own (LogitRelaxedBernoulli's, which torch does not
    flag)."""
    d = build(TORCH, name)[0]
    return d.has_rsample or type(d).rsample is not TD.Distribution.rsample


RSAMPLE_CASES = [n for n in sorted(CASES) if n not in ("Wishart", "Wishart_tril")
                 and _reparameterized(n)]


@pytest.mark.parametrize("name", RSAMPLE_CASES)
def test_rsample_matches_torch_with_the_same_noise(name, monkeypatch):
    ed, eleaves = build(EMBER, name)
    td, tleaves = build(TORCH, name)
    noise = Noise(monkeypatch)
    noise.record_ember()
    ember.manual_seed(3)
    ex = ed.rsample((5,))
    noise.replay_torch()
    tx = td.rsample((5,))
    assert noise.used_up()
    weights = rng.randn(*tuple(tx.shape))
    tg = grads(tx * torch.from_numpy(weights), tleaves)
    eg = grads(ex * ember.from_numpy(weights), eleaves)
    if name != "OneHotCategoricalStraightThrough":  # its sample is not reparameterized noise
        close(ex, tx)
    for k in tg:
        assert np.isfinite(eg[k]).all()
        close(eg[k], tg[k], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", ["Wishart", "Wishart_tril"])
def test_wishart_rsample_differentiates(name):
    ed, eleaves = build(EMBER, name)
    x = ed.rsample((4,))
    assert tuple(x.shape) == (4,) + tuple(ed.batch_shape) + tuple(ed.event_shape)
    for g in grads(x, eleaves).values():
        assert np.isfinite(g).all()
    assert bool(ed.support.check(x).all())


def test_location_scale_rsample_is_exact_in_its_noise():
    loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    scale = ember.tensor([2.0, 0.3], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(11)
    x = ED.Normal(loc, scale).rsample((6,))
    ember.manual_seed(11)
    eps = EU._standard_normal((6, 2), ember.float64, loc.device)
    close(x, loc.detach() + eps * scale.detach(), rtol=0, atol=0)
    x.sum().backward()
    close(loc.grad, [6.0, 6.0], rtol=0, atol=0)
    close(scale.grad, eps.sum(0))


# ----------------------------------------------------------------------------------------------
# The samplers ember writes itself, and the implicit reparameterization gradients.

def test_standard_gamma_grad_matches_torch():
    alpha = np.logspace(-2, 2.5, 40)[:, None]
    q = np.array([0.01, 0.1, 0.3, 0.6, 0.95, 0.99, 1.05, 1.5, 3.0])[None, :]
    x = np.broadcast_to(np.maximum(alpha * q, 1e-3), (40, 9)).copy()
    alpha = np.broadcast_to(alpha, (40, 9)).copy()
    close(EU._standard_gamma_grad(ember.from_numpy(alpha), ember.from_numpy(x)),
          torch._standard_gamma_grad(torch.from_numpy(alpha), torch.from_numpy(x)), rtol=1e-8)


def test_dirichlet_grad_matches_torch():
    x = np.linspace(0.002, 0.998, 23)[:, None, None]
    alpha = np.logspace(-1.5, 1.5, 9)[None, :, None]
    beta = np.logspace(-1.5, 1.5, 7)[None, None, :]
    x, alpha, beta = (np.broadcast_to(a, (23, 9, 7)).copy() for a in (x, alpha, beta))
    close(EU._dirichlet_grad(*(ember.from_numpy(a) for a in (x, alpha, alpha + beta))),
          torch._dirichlet_grad(*(torch.from_numpy(a) for a in (x, alpha, alpha + beta))),
          rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 20.0])
def test_gamma_sampler_follows_the_gamma_cdf(alpha):
    ember.manual_seed(5)
    n = 20000
    x = np.sort(ED.Gamma(ember.tensor(alpha, dtype=ember.float64), 1.0).sample((n,)).numpy())
    cdf = torch.special.gammainc(torch.tensor(alpha, dtype=torch.float64),
                                 torch.from_numpy(x)).numpy()
    ks = np.max(np.maximum(np.arange(1, n + 1) / n - cdf, cdf - np.arange(n) / n))
    assert ks < 0.015, ks
    assert x.min() > 0


@pytest.mark.parametrize("name,counts", [
    ("Poisson", dict(rate=[0.5, 4.0, 10.5, 60.0])),
    ("Binomial", dict(total_count=[5.0, 40.0, 200.0, 30.0], probs=[0.1, 0.5, 0.93, 0.97])),
])
def test_discrete_samplers_follow_the_pmf(name, counts):
    ember.manual_seed(6)
    n = 20000
    ed = getattr(ED, name)(**{k: ember.tensor(v, dtype=ember.float64) for k, v in counts.items()})
    td = getattr(TD, name)(**{k: torch.tensor(v, dtype=torch.float64) for k, v in counts.items()},
                           validate_args=False)  # scores counts beyond total_count as 0
    x = ed.sample((n,)).numpy()
    assert (x == np.round(x)).all() and (x >= 0).all()
    for k in range(int(x.max()) + 1):
        freq = (x == k).mean(0)
        pmf = td.log_prob(torch.full((4,), float(k), dtype=torch.float64)).exp().numpy()
        assert (np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / n) + 2e-3).all(), (k, freq, pmf)


STAT_CASES = ["Gamma", "Chi2", "Beta", "Dirichlet", "Exponential", "Laplace", "Uniform",
              "StudentT", "FisherSnedecor", "HalfNormal", "LogNormal", "Gumbel", "Weibull",
              "Kumaraswamy", "ContinuousBernoulli", "Bernoulli", "Binomial", "Geometric",
              "Poisson", "NegativeBinomial", "Multinomial", "Categorical", "OneHotCategorical",
              "MultivariateNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Wishart",
              "Normal", "Pareto", "Cauchy"]


@pytest.mark.parametrize("name", STAT_CASES)
def test_sample_mean_matches_the_mean(name):
    """The sample mean of 20000 draws within 6 standard errors of torch's mean (where the
    variance is finite; medians for Cauchy and Pareto)."""
    td, _ = build(TORCH, name)
    ed, _ = build(EMBER, name)
    ember.manual_seed(7)
    n = 20000
    x = ed.sample((n,)).numpy()
    if name == "Categorical":
        x = np.eye(td.probs.shape[-1])[x]
        mean, var = _np(td.probs), _np(td.probs * (1 - td.probs))
    elif name in ("Cauchy", "Pareto"):  # heavy tails: medians, loc and scale 2^(1/alpha)
        median = _np(td.loc) if name == "Cauchy" else _np(td.scale * 2 ** (1 / td.alpha))
        np.testing.assert_allclose(np.median(x, 0), median, rtol=0.03, atol=0.03)
        return
    else:
        mean, var = _np(td.mean), _np(td.variance)
    ok = np.isfinite(mean) & np.isfinite(var)
    se = np.sqrt(np.where(ok, var, 1.0) / n)
    err = np.abs(x.mean(0) - mean)
    assert (err[ok] < 6 * se[ok] + 1e-3).all(), (err, se)
    if ok.any():
        assert np.isfinite(x).all()


def test_von_mises_and_lkj_samples():
    ember.manual_seed(8)
    td, _ = build(TORCH, "VonMises")
    ed, _ = build(EMBER, "VonMises")
    x = ed.sample((20000,)).numpy()
    assert ((x >= -math.pi) & (x < math.pi)).all()
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - the circular variance.
    np.testing.assert_allclose(np.cos(x - _np(td.loc)).mean(0), 1 - _np(td.variance), atol=0.02)
    ed, _ = build(EMBER, "LKJCholesky")
    L = ed.sample((5000,))
    assert bool(ED.constraints.corr_cholesky.check(L).all())
    # Off-diagonal correlations have mean 0, variance 1 / (2 eta + dim - 1) for dim 3.
    corr = (L @ L.mT).numpy()[..., 1, 0]
    np.testing.assert_allclose(corr.mean(0), 0, atol=0.05)
    np.testing.assert_allclose(corr.var(0), 1 / (2 * np.array([0.5, 1.0, 3.0]) + 2), rtol=0.1)


# ----------------------------------------------------------------------------------------------
# Transforms, constraints and the registries.

def _transforms(L, T):
    return [
        L.D.ExpTransform(), L.D.SigmoidTransform(), L.D.TanhTransform(), L.D.SoftplusTransform(),
        L.D.AbsTransform(), L.D.AffineTransform(T([0.5, -1.0, 2.0]), T([2.0, -0.5, 1.5])),
        L.D.AffineTransform(1.5, -2.0), L.D.AffineTransform(T([[0.1, 0.2, 0.3]]), 3.0, event_dim=1),
        L.D.PowerTransform(T([2.0, 0.5, 3.0])), L.D.SoftmaxTransform(),
        L.D.StickBreakingTransform(), L.D.LowerCholeskyTransform(),
        L.D.CorrCholeskyTransform(), L.D.ReshapeTransform((3,), (3, 1)),
        L.D.IndependentTransform(L.D.ExpTransform(), 1),
        L.D.ComposeTransform([L.D.AffineTransform(0.3, 2.0), L.D.ExpTransform()]),
        L.D.ExpTransform().inv, L.D.identity_transform,
        L.D.CatTransform([L.D.ExpTransform(), L.D.identity_transform], dim=-1, lengths=[2, 1]),
        L.D.StackTransform([L.D.ExpTransform(), L.D.SigmoidTransform(), L.D.AbsTransform()],
                           dim=-1),
        L.D.CumulativeDistributionTransform(L.D.Normal(T([0.0, 1.0, -1.0]), T([1.0, 2.0, 0.5]))),
    ]


@pytest.mark.parametrize("index", range(21))
def test_transform_matches_torch(index):
    tt = _transforms(TORCH, lambda v: torch.tensor(v, dtype=torch.float64))[index]
    et = _transforms(EMBER, lambda v: ember.tensor(v, dtype=ember.float64))[index]
    assert type(et).__name__ == type(tt).__name__ and repr(et).startswith(type(tt).__name__[:3])
    assert et.bijective == tt.bijective
    assert et.domain.event_dim == tt.domain.event_dim
    assert et.codomain.event_dim == tt.codomain.event_dim
    assert type(et.domain).__name__ == type(tt.domain).__name__
    assert type(et.codomain).__name__ == type(tt.codomain).__name__
    name = type(tt).__name__
    x = rng.randn(2, 3, 3) if name in ("LowerCholeskyTransform",) else rng.randn(2, 3)
    if name in ("PowerTransform",):
        x = np.abs(x) + 0.1
    tx, ex = torch.from_numpy(x).requires_grad_(), ember.from_numpy(x).requires_grad_()
    ty, ey = tt(tx), et(ex)
    close(ey, ty)
    assert tuple(et.forward_shape(ex.shape)) == tuple(tt.forward_shape(tx.shape))
    assert tuple(et.inverse_shape(ey.shape)) == tuple(tt.inverse_shape(ty.shape))
    y = _np(ty)
    close(et.inv(ember.from_numpy(y)), tt.inv(torch.from_numpy(y)), rtol=1e-8, atol=1e-10)
    tj = same(lambda: tt.log_abs_det_jacobian(tx, ty), lambda: et.log_abs_det_jacobian(ex, ey),
              rtol=1e-8)
    if not isinstance(tj, type):
        ej = et.log_abs_det_jacobian(ex, ey)
        assert ej.requires_grad == tj.requires_grad  # constant for affine maps
        if tj.requires_grad:
            close(grads(ej, {"x": ex})["x"], grads(tj, {"x": tx})["x"], rtol=1e-8, atol=1e-10)
    same(lambda: tt.sign, lambda: et.sign)
    assert et.inv.inv is et
    assert et == et and (et.inv == et.inv)


def test_transform_caching_and_equality():
    t = ED.TanhTransform(cache_size=1)
    x = ember.tensor([30.0], dtype=ember.float64)
    y = t(x)
    assert t.inv(y) is x  # the cache returns x itself, where atanh(1.0) would be inf
    assert ED.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ED.ExpTransform(cache_size=2)
    assert ED.AffineTransform(1.0, 2.0) == ED.AffineTransform(1.0, 2.0)
    assert ED.AffineTransform(1.0, 2.0) != ED.AffineTransform(1.0, 3.0)
    assert ED.ComposeTransform([ED.ExpTransform()]) == ED.ComposeTransform([ED.ExpTransform()])
    assert ED.PowerTransform(ember.tensor(2.0)) == ED.PowerTransform(ember.tensor(2.0))
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        ED.ReshapeTransform((2,), (3,))

    class Shift(ED.Transform):  # a custom __init__ without its own with_cache
        def __init__(self, by):
            super().__init__()
            self.by = by

    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        Shift(1.0).with_cache(1)


def _constraints(C, T):
    return [C.real, C.boolean, C.nonnegative_integer, C.positive_integer, C.integer_interval(0, 3),
            C.positive, C.nonnegative, C.greater_than(0.5), C.greater_than_eq(0.5),
            C.less_than(0.5), C.interval(-1.0, 1.0), C.half_open_interval(-1.0, 1.0),
            C.unit_interval, C.real_vector, C.simplex, C.one_hot, C.multinomial(3),
            C.lower_triangular, C.lower_cholesky, C.corr_cholesky, C.square, C.symmetric,
            C.positive_semidefinite, C.positive_definite, C.independent(C.positive, 1),
            C.cat([C.positive, C.real], dim=-1, lengths=[1, 2]),
            C.stack([C.positive, C.real, C.unit_interval], dim=-1),
            C.interval(T([0.0, 1.0, 2.0]), T([1.0, 3.0, 2.5])),
            C.greater_than(T([0.0, 1.0, 2.0]))]


def _constraint_values():
    a = rng.randn(3, 3)
    return [
        np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.0], [-1.0, 2.0, 3.0]]),
        np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.5, 0.6, -0.1]]),
        np.stack([np.eye(3), np.linalg.cholesky(_spd(3, 3)), a, a @ a.T, -np.eye(3),
                  np.array([[1.0, 0, 0], [0.6, 0.8, 0], [0.0, 0.6, 0.8]]),
                  a @ a.T + 3 * np.eye(3)]),
    ]


@pytest.mark.parametrize("index", range(29))
def test_constraint_matches_torch(index):
    tc = _constraints(TD.constraints, lambda v: torch.tensor(v, dtype=torch.float64))[index]
    ec = _constraints(ED.constraints, lambda v: ember.tensor(v, dtype=ember.float64))[index]
    assert type(ec).__name__ == type(tc).__name__
    assert ec.event_dim == tc.event_dim and ec.is_discrete == tc.is_discrete
    if not any(isinstance(getattr(tc, a, None), torch.Tensor)
               for a in ("lower_bound", "upper_bound")):
        assert repr(ec) == repr(tc)
    for v in _constraint_values():
        if v.ndim < tc.event_dim:
            continue
        same(lambda: tc.check(torch.from_numpy(v)), lambda: ec.check(ember.from_numpy(v)),
             rtol=0, atol=0)


@pytest.mark.parametrize("index", range(29))
def test_biject_to_and_transform_to_match_torch(index):
    tc = _constraints(TD.constraints, lambda v: torch.tensor(v, dtype=torch.float64))[index]
    ec = _constraints(ED.constraints, lambda v: ember.tensor(v, dtype=ember.float64))[index]
    for registry in ("biject_to", "transform_to"):
        tt = both(lambda: getattr(TD, registry)(tc))
        et = both(lambda: getattr(ED, registry)(ec))
        if isinstance(tt, type):
            assert et is tt
            continue
        assert type(et).__name__ == type(tt).__name__
        shape = (2, 3, 3) if tt.domain.event_dim == 2 else (2, 3)
        x = rng.randn(*shape)
        close(et(ember.from_numpy(x)), tt(torch.from_numpy(x)), rtol=1e-8)
        assert bool(ec.check(et(ember.from_numpy(x))).all())
        if tt.bijective:
            y = tt(torch.from_numpy(x))
            close(et.log_abs_det_jacobian(ember.from_numpy(x), ember.from_numpy(_np(y))),
                  tt.log_abs_det_jacobian(torch.from_numpy(x), y), rtol=1e-8)


def test_registry_extension_and_errors():
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        ED.biject_to(ED.constraints.boolean)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        ED.biject_to.register(int, lambda c: None)
    registry = ED.constraint_registry.ConstraintRegistry()
    registry.register(ED.constraints.positive, lambda c: ED.SoftplusTransform())
    assert isinstance(registry(ED.constraints.positive), ED.SoftplusTransform)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        ED.constraints.dependent.check(ember.zeros(1))
    assert ED.constraints.is_dependent(ED.Uniform.support)
    assert ED.Uniform.arg_constraints["low"].event_dim == 0


# ----------------------------------------------------------------------------------------------
# KL divergence: every pair PyTorch registers.

def _kl_examples(L, T):
    """Two (or three) distributions of batch shape (3,) per type."""
    D = L.D
    return {
        "Bernoulli": [D.Bernoulli(T([0.0, 0.3, 1.0])), D.Bernoulli(T([0.0, 0.6, 0.5]))],
        "Beta": [D.Beta(T([0.5, 2.0, 3.0]), T([1.5, 0.7, 3.0])),
                 D.Beta(T([1.0, 4.0, 0.3]), T([2.0, 1.0, 0.9]))],
        "Binomial": [D.Binomial(T([10.0, 10.0, 10.0]), T([0.2, 0.5, 0.9])),
                     D.Binomial(T([8.0, 10.0, 5.0]), logits=T([0.3, -1.0, 2.0]))],
        "Categorical": [D.Categorical(T([[0.2, 0.8, 0.0]] * 3)),
                        D.Categorical(T([[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.1, 0.1, 0.8]]))],
        "ContinuousBernoulli": [D.ContinuousBernoulli(T([0.2, 0.4995, 0.7])),
                                D.ContinuousBernoulli(T([0.6, 0.3, 0.5004]))],
        "Dirichlet": [D.Dirichlet(T(_pos(3, 4) * 0 + [[0.5, 1, 2, 3]])),
                      D.Dirichlet(T([[1.5, 1, 0.5, 2]]).expand(3, 4))],
        "Exponential": [D.Exponential(T([0.5, 1.0, 3.0])), D.Exponential(T([2.0, 1.0, 0.2]))],
        "Gamma": [D.Gamma(T([0.5, 2.0, 9.0]), T([1.0, 0.5, 2.0])),
                  D.Gamma(T([1.5, 0.3, 4.0]), T([0.7, 2.0, 1.0]))],
        "Gumbel": [D.Gumbel(T([0.0, 1.0, -1.0]), T([1.0, 0.5, 2.0])),
                   D.Gumbel(T([0.5, -1.0, 0.0]), T([2.0, 1.0, 0.7]))],
        "Geometric": [D.Geometric(T([0.2, 0.5, 0.9])), D.Geometric(T([0.6, 0.1, 0.5]))],
        "HalfNormal": [D.HalfNormal(T([1.0, 0.5, 2.0])), D.HalfNormal(T([0.3, 2.0, 1.0]))],
        "Laplace": [D.Laplace(T([0.0, 1.0, -1.0]), T([1.0, 0.5, 2.0])),
                    D.Laplace(T([0.5, -1.0, 0.0]), T([2.0, 1.0, 0.7]))],
        "LowRankMultivariateNormal": [
            D.LowRankMultivariateNormal(T(np.zeros((3, 2))), T(np.ones((2, 1))), T(np.ones(2))),
            D.LowRankMultivariateNormal(T(rng.randn(3, 2)), T(rng.randn(3, 2, 2)),
                                        T(_pos(3, 2)))],
        "MultivariateNormal": [
            D.MultivariateNormal(T(rng.randn(3, 2)), T(_spd(2, 2))),
            D.MultivariateNormal(T(rng.randn(2)), scale_tril=T(np.linalg.cholesky(_spd(3, 2, 2))))],
        "Normal": [D.Normal(T([0.0, 1.0, -1.0]), T([1.0, 0.5, 2.0])),
                   D.Normal(T([0.5, -1.0, 0.0]), T([2.0, 1.0, 0.7]))],
        "OneHotCategorical": [D.OneHotCategorical(T([[0.2, 0.8, 0.0]] * 3)),
                              D.OneHotCategorical(T([[0.5, 0.25, 0.25]] * 3))],
        "Pareto": [D.Pareto(T([1.0, 0.5, 2.0]), T([0.8, 1.5, 3.0])),
                   D.Pareto(T([0.5, 1.0, 1.0]), T([2.5, 0.7, 1.2]))],
        "Poisson": [D.Poisson(T([0.5, 2.0, 10.0])), D.Poisson(T([1.5, 0.3, 8.0]))],
        "TransformedDistribution": [D.LogNormal(T([0.0, 1.0, -1.0]), T([1.0, 0.5, 2.0])),
                                    D.LogNormal(T([0.5, -1.0, 0.0]), T([2.0, 1.0, 0.7]))],
        "Uniform": [D.Uniform(T([0.1, -0.5, 0.2]), T([0.6, 0.5, 1.5])),
                    D.Uniform(T([0.0, -1.0, 0.3]), T([0.8, 2.0, 0.9]))],
        "Independent": [D.Independent(D.Normal(T(rng.randn(3, 2)), T(_pos(3, 2))), 1),
                        D.Independent(D.Normal(T(rng.randn(3, 2)), T(_pos(3, 2))), 1)],
        "Cauchy": [D.Cauchy(T([0.0, 1.0, -1.0]), T([1.0, 0.5, 2.0])),
                   D.Cauchy(T([0.5, -1.0, 0.0]), T([2.0, 1.0, 0.7]))],
        "ExponentialFamily": [D.Wishart(T([3.0, 4.0, 2.5]), T(_spd(3, 2, 2))),
                              D.Wishart(T([2.0, 6.0, 3.0]), T(_spd(3, 2, 2)))],
    }


def _kl_pairs():
    return sorted((p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY)


@pytest.mark.parametrize("pair", _kl_pairs(), ids="-".join)
def test_kl_divergence_matches_torch(pair):
    np_state = rng.get_state()
    texamples = _kl_examples(TORCH, lambda v: torch.tensor(np.asarray(v, dtype=np.float64)))
    rng.set_state(np_state)
    eexamples = _kl_examples(EMBER, lambda v: ember.tensor(np.asarray(v, dtype=np.float64)))
    p_name, q_name = pair
    for i, j in ((0, 1), (1, 0), (0, 0)):
        same(lambda: TD.kl_divergence(texamples[p_name][i], texamples[q_name][j]),
             lambda: ED.kl_divergence(eexamples[p_name][i], eexamples[q_name][j]),
             rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "Exponential",
                                  "Poisson", "Bernoulli", "ContinuousBernoulli", "Wishart"])
def test_exponential_family_bregman_kl_and_entropy(name):
    np_state = rng.get_state()
    tp, tq = build(TORCH, name)[0], build(TORCH, name)[0]
    rng.set_state(np_state)
    ep, eq = build(EMBER, name)[0], build(EMBER, name)[0]
    tq = tq.expand(tq.batch_shape)
    close(ED.kl._kl_expfamily_expfamily(ep, eq), TD.kl._kl_expfamily_expfamily(tp, tq),
          rtol=1e-8, atol=1e-10)
    # Families without _mean_carrier_measure (Poisson, Beta, Dirichlet) raise in both.
    same(lambda: TD.ExponentialFamily.entropy(tp), lambda: ED.ExponentialFamily.entropy(ep),
         rtol=1e-8, atol=1e-10)


def test_kl_registry_dispatch_and_errors():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type VonMises and q type Normal"):
        ED.kl_divergence(ED.VonMises(0.0, 1.0), ED.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="between different exponential families"):
        ED.kl.kl_divergence(ED.Normal(0.0, 1.0), ED.Poisson(1.0))

    class MyNormal(ED.Normal):
        pass

    assert ED.kl.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0)).item() == 0.5
    ED.register_kl(MyNormal, ED.Normal)(lambda p, q: ember.tensor(7.0))
    try:
        assert ED.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0)).item() == 7.0
    finally:
        del ED.kl._KL_REGISTRY[MyNormal, ED.Normal]
        ED.kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        ED.register_kl(int, ED.Normal)
    assert "Normal` and :class:`~ember.distributions.Normal" in ED.kl_divergence.__doc__


# ----------------------------------------------------------------------------------------------
# Validation, errors, names.

def _first_line(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value).split("\n")[0].replace("torch.", "ember.")


@pytest.mark.parametrize("make", [
    lambda L: L.D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.D.Bernoulli(L.tensor([0.5, 1.5])),
    lambda L: L.D.Categorical(L.tensor([[-0.5, 1.5]])),
    lambda L: L.D.Uniform(L.tensor([0.0]), L.tensor([0.0])),
    lambda L: L.D.Geometric(L.tensor([0.0, 0.5])),
    lambda L: L.D.Dirichlet(L.tensor(1.0)),
    lambda L: L.D.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    lambda L: L.D.MultivariateNormal(L.tensor([0.0, 0.0]), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.D.MultivariateNormal(L.tensor([0.0, 0.0])),
    lambda L: L.D.Bernoulli(),
    lambda L: L.D.Normal(L.tensor([0.0, 0.0]), 1.0).log_prob(L.tensor([[1.0, 2.0, 3.0]])),
    lambda L: L.D.Exponential(L.tensor([1.0])).log_prob(L.tensor([-1.0])),
    lambda L: L.D.Dirichlet(L.tensor([1.0, 2.0])).log_prob(L.tensor([0.5, 0.2, 0.3])),
    lambda L: L.D.Normal(0.0, 1.0).log_prob(1.0),
    lambda L: L.D.Independent(L.D.Normal(0.0, 1.0), 1),
    lambda L: L.D.LKJCholesky(1),
    lambda L: L.D.Wishart(L.tensor(1.0), covariance_matrix=L.tensor(np.eye(3))),
    lambda L: L.D.ContinuousBernoulli(L.tensor([1.2]), validate_args=True),
    lambda L: L.D.MixtureSameFamily(L.D.Normal(0.0, 1.0), L.D.Normal(0.0, 1.0)),
    lambda L: L.D.Binomial(L.tensor([2.0, 3.0]), L.tensor([0.5, 0.5])).entropy(),
    lambda L: L.D.Normal(0.0, 1.0).enumerate_support(),
    lambda L: L.D.Multinomial(L.tensor(3.0), L.tensor([0.5, 0.5])),
])
def test_validation_errors_match_torch(make):
    assert _first_line(lambda: make(EMBER)) == _first_line(lambda: make(TORCH))


def test_validate_args_switches():
    scale = ember.tensor([-1.0])
    ED.Normal(0.0, scale, validate_args=False)  # no check
    ED.Distribution.set_default_validate_args(False)
    try:
        d = ED.Normal(0.0, scale)
        assert not d._validate_args
        d.log_prob(ember.tensor([1.0]))
    finally:
        ED.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ED.Normal(0.0, scale)
    with pytest.raises(ValueError):
        ED.Distribution.set_default_validate_args("yes")
    # A value outside the support is reported only when validating.
    assert ED.Exponential(1.0, validate_args=False).log_prob(ember.tensor(-1.0)).item() == 1.0


# Names of PyTorch 2.6 that ember exports beside 1.13's (checked in test_api_extra.py).
_NEW_IN_2_6 = {"InverseGamma", "PositiveDefiniteTransform"}


def test_public_names_match_torch():
    assert sorted(set(ED.__all__) - _NEW_IN_2_6) == sorted(TD.__all__)
    assert sorted(ED.constraints.__all__) == sorted(TD.constraints.__all__)
    assert sorted(set(ED.transforms.__all__) - _NEW_IN_2_6) == sorted(TD.transforms.__all__)
    assert ED.normal.Normal is ED.Normal and ED.kl.kl_divergence is ED.kl_divergence
    assert ED.constraints.positive.lower_bound == 0.0
    assert isinstance(ED.transforms.ExpTransform(), ED.Transform)
    for name in TD.__all__:
        assert hasattr(ED, name), name


def test_repr_and_shapes():
    d = ED.Normal(ember.zeros(2, 3), 1.0)
    assert repr(d) == "Normal(loc: ember.Size([2, 3]), scale: ember.Size([2, 3]))"
    assert repr(ED.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert isinstance(d.batch_shape, ember.Size) and d.event_shape == ()
    assert repr(ED.Independent(d, 1)).startswith("Independent(Normal(")
    assert d.sample_n(4).shape == (4, 2, 3)
    assert tuple(ED.Normal(0.0, 1.0).sample().shape) == ()
    assert ED.Normal(0.0, 1.0).loc.dtype == ember.get_default_dtype()

    class Shifted(ED.Normal):  # a custom __init__ needs its own expand
        def __init__(self, loc):
            super().__init__(loc + 1.0, 1.0)

    with pytest.raises(NotImplementedError, match="Subclass Shifted of Normal that defines a "
                                                  "custom __init__ method must also define"):
        Shifted(ember.zeros(2)).expand((3, 2))


# ----------------------------------------------------------------------------------------------
# The original checks (float32, default dtype) and serialization.

P = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=np.float32)


def test_categorical_float32_and_frequencies():
    tc = TD.Categorical(torch.tensor(P))
    ec = ED.Categorical(ember.tensor(P))
    close(ec.log_prob(ember.tensor([2, 0])), tc.log_prob(torch.tensor([2, 0])), 1e-5, 1e-6)
    close(ec.entropy(), tc.entropy(), 1e-5, 1e-6)
    ember.manual_seed(0)
    s = ec.sample((4000,))
    assert tuple(s.shape) == (4000, 2) and s.dtype == ember.int64
    np.testing.assert_allclose(np.bincount(s.numpy()[:, 0], minlength=3) / 4000, P[0], atol=0.03)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        ED.Categorical()


def test_safe_globals_and_default_backend():
    with ember.serialization.safe_globals([np.ndarray]):
        assert np.ndarray in ember.serialization.get_safe_globals()
    assert np.ndarray not in ember.serialization.get_safe_globals()
    assert ember.distributed.get_default_backend_for_device("cuda:1") == "nccl"
    assert ember.distributed.get_default_backend_for_device(ember.device("cpu")) == "gloo"
