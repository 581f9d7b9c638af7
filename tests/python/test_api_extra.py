"""PyTorch names ember lacked (the public-API coverage list): torch.optim.Adafactor,
distributions.InverseGamma and PositiveDefiniteTransform, utils.data's StackDataset,
_DatasetKind and DataPipes, nn.grad, nn.Container, nn.UninitializedBuffer, nn.common_types,
nn.factory_kwargs, F.lp_pool3d and nn.LPPool3d, F's grid_sample tables and assert_int_or_pair,
linalg.diagonal and linalg.matmul. Names PyTorch 1.13 has are checked against it; names new in
2.6 against constants computed with PyTorch 2.6 (each says how)."""
import functools
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn
import ember.nn.functional as F


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def T(e):
    return torch.from_numpy(e.detach().numpy().copy())


def close(e, t, rtol=1e-6, atol=0):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# ================================================================================================
# torch.optim.Adafactor (PyTorch 2.6)
# ================================================================================================

_ADA_SHAPES = [(3, 4), (5,), (2, 3, 2), ()]
_ADA_CONFIGS = [dict(), dict(lr=0.1, weight_decay=0.1),
                dict(maximize=True, d=1.5, beta2_decay=-0.5), dict(eps=(1e-30, 1e-2), lr=0.5),
                dict(foreach=True, weight_decay=0.05)]

# The parameters after 4 steps of torch.optim.Adafactor(params, **_ADA_CONFIGS[i]) (key "f64":
# the default config in float64) on loss = sum_j (sin(p_j * (j + 1)) * p_j).sum(), from
# _ada_start's values; made with PyTorch 2.6 (chroot /var/cache/ember-trixie/root python3) running
# _ada_run below with torch in place of ember, flattened and concatenated.
_ADA_EXPECTED = {
    0: [
        0, 0.604694545, 0.956628442, 0.837230384, 0.310888171, -0.326186568, -0.842807233,
        -0.954217494, -0.589231491, 0.0155702736, 0.632183969, 0.959449887, 1.74083126,
        2.04037619, 1.4099195, 0.0333709531, -1.28364432, 2.78900599, 1.37264156, -0.786706567,
        -2.34487605, -3.07821441, -2.05083632, -0.191392988, 1.63950109, 2.98569703, 2.77187371,
        1.31127787, -0.915014863, 0.587400198],
    1: [
        0, 0.30685252, 0.701622128, 0.614676178, 0.141963944, -0.153253049, -0.598192394,
        -0.705667973, -0.276019931, 0.00702842418, 0.430932701, 0.705091417, 2.2114749,
        2.39356661, 1.98172486, 0.110290572, -1.90145814, 3.59952354, 1.62138796, -1.01696384,
        -1.65290928, -3.6485436, -1.62773037, -0.00414967164, 1.73161328, 3.6207006, 3.40740633,
        1.63120389, -1.65569723, 0.796809673],
    2: [
        0, 0.685261428, 1.01506019, 0.890115976, 0.360398322, -0.376720488, -0.901262462,
        -1.01150835, -0.674871385, 0.0181335844, 0.682792008, 1.0176748, 1.62708473, 1.9269768,
        1.29583836, 0.142052472, -1.16942048, 2.68776941, 1.18076706, -0.743921578, -2.55508637,
        -2.89907932, -2.18969154, -0.290765345, 1.93276322, 2.81879807, 2.67579889, 1.1502074,
        -0.759525597, 0.543333888],
    3: [
        0, 0.00477369409, 0.244557843, 0.231192917, 0.000487844634, -0.000911537674,
        -0.185241252, -0.268181801, -0.00105209881, 1.25760253e-05, 0.11083132, 0.251397848,
        2.73987675, 1.83961868, 2.49961424, 0.465381801, -2.49337029, 3.54519653, 0.57896781,
        -0.582270026, -1.75887728, -5.07923889, -0.721577764, 1.56251216, -1.8022269, 4.6032362,
        4.37903118, 0.436690629, -2.32213187, 1.50887311],
    4: [
        0, 0.603475213, 0.954702377, 0.835549951, 0.310263723, -0.325531453, -0.841112852,
        -0.952298164, -0.588041246, 0.0155390315, 0.630916178, 0.957518756, 1.7373662, 2.0363698,
        1.40706992, 0.0333007015, -1.28101897, 2.78247237, 1.37048519, -0.785050213, -2.33986783,
        -3.0723598, -2.0466578, -0.190779164, 1.63818169, 2.97981906, 2.76533079, 1.30887914,
        -0.914095521, 0.586237848],
    'f64': [
        0, 0.6046945167399238, 0.95662846412284908, 0.83723042242846424, 0.31088815826263411,
        -0.32618657783415161, -0.8428072811225169, -0.95421748200853773, -0.58923145359356,
        0.015570274988649373, 0.63218398452058266, 0.95944978526358482, 1.7408312559395487,
        2.0403764307297099, 1.4099195136435358, 0.033370951538375687, -1.2836442417919396,
        2.7890057934431285, 1.3726415105243275, -0.7867065695282397, -2.3448760792004935,
        -3.0782143815125567, -2.0508362634653534, -0.1913929901356243, 1.6395010783803374,
        2.9856968686578624, 2.7718736071173935, 1.3112780263763595, -0.91501490722796286,
        0.58740018511332071],
}


def _ada_start(dtype):
    return [ember.from_numpy((np.sin(np.arange(int(np.prod(s))) * 0.7 + j) * (j + 1))
                             .reshape(s)).to(dtype) for j, s in enumerate(_ADA_SHAPES)]


def _ada_run(kw, dtype=ember.float32, steps=4):
    ps = [p.requires_grad_() for p in _ada_start(dtype)]
    opt = ember.optim.Adafactor(ps, **kw)
    for _ in range(steps):
        opt.zero_grad()
        sum(((p * (j + 1)).sin() * p).sum() for j, p in enumerate(ps)).backward()
        opt.step()
    return opt, np.concatenate([p.detach().double().numpy().ravel() for p in ps])


@pytest.mark.parametrize("index", range(len(_ADA_CONFIGS)))
def test_adafactor_matches_torch_2_6(index):
    _, got = _ada_run(_ADA_CONFIGS[index])
    np.testing.assert_allclose(got, _ADA_EXPECTED[index], rtol=1e-5, atol=1e-6)


def test_adafactor_float64_matches_torch_2_6():
    _, got = _ada_run({}, ember.float64)
    np.testing.assert_allclose(got, _ADA_EXPECTED["f64"], rtol=1e-12, atol=1e-14)


def test_adafactor_state_and_groups():
    # Layout as PyTorch 2.6's state_dict for a (3, 4), a (5,) and a (2, 3, 2) parameter.
    ps = [ember.zeros(3, 4, requires_grad=True), ember.zeros(5, requires_grad=True),
          ember.zeros(2, 3, 2, requires_grad=True)]
    opt = ember.optim.Adafactor(ps)
    for p in ps:
        p.grad = ember.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    layout = {k: {kk: (tuple(v.shape), str(v.dtype).rpartition(".")[2]) for kk, v in s.items()}
              for k, s in sd["state"].items()}
    assert layout == {
        0: {"step": ((), "float32"), "row_var": ((3, 1), "float32"),
            "col_var": ((1, 4), "float32")},
        1: {"step": ((), "float32"), "variance": ((5,), "float32")},
        2: {"step": ((), "float32"), "row_var": ((2, 3, 1), "float32"),
            "col_var": ((2, 1, 2), "float32")}}
    assert sd["param_groups"] == [{"lr": 0.01, "beta2_decay": -0.8, "eps": (None, 0.001),
                                   "d": 1.0, "weight_decay": 0.0, "foreach": None,
                                   "maximize": False, "params": [0, 1, 2]}]
    assert ember.optim.Adafactor in vars(ember.optim).values()
    assert "Adafactor" in ember.optim.__all__
    # A saved state loads back and steps on as the original does.
    opt2 = ember.optim.Adafactor([p.detach().clone().requires_grad_() for p in ps])
    opt2.load_state_dict(sd)
    assert opt2.state[opt2.param_groups[0]["params"][0]]["step"].item() == 1.0


@pytest.mark.parametrize("kw,msg", [
    (dict(lr=-1), "Learning rate should be >= 0 but is: -1"),
    (dict(beta2_decay=0.1), "beta2_decay should be <= 0 but is: 0.1"),
    (dict(eps=(-1, 1e-3)), "epsilon1 should be >= 0 but is: -1"),
    (dict(eps=(None, -1)), "epsilon2 should be >= 0 but is: -1"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-1), "weight_decay should be >= 0 but is: -1"),
])
def test_adafactor_errors(kw, msg):
    # PyTorch 2.6's messages.
    with pytest.raises(ValueError, match="^" + msg.replace("(", r"\(").replace(".", r"\.") + "$"):
        ember.optim.Adafactor([ember.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        ember.optim.Adafactor([ember.zeros(2, requires_grad=True)], lr=ember.tensor([1.0, 2.0]))


def test_adafactor_tensor_lr_and_closure():
    ps = [p.requires_grad_() for p in _ada_start(ember.float32)]
    opt = ember.optim.Adafactor(ps, lr=ember.tensor(0.01))

    def closure():
        opt.zero_grad()
        loss = sum(((p * (j + 1)).sin() * p).sum() for j, p in enumerate(ps))
        loss.backward()
        return loss

    for _ in range(4):
        assert opt.step(closure) is not None
    got = np.concatenate([p.detach().double().numpy().ravel() for p in ps])
    np.testing.assert_allclose(got, _ADA_EXPECTED[0], rtol=1e-5, atol=1e-6)


# ================================================================================================
# torch.distributions.InverseGamma and transforms.PositiveDefiniteTransform (PyTorch 2.6)
# ================================================================================================

# Made with PyTorch 2.6 (chroot /var/cache/ember-trixie/root python3) for
# InverseGamma(concentration=[0.5, 1.5, 2.5, 4.0], rate=[1.0, 0.5, 2.0, 3.0]) in float64 at
# x = [0.3, 1.0, 2.0, 5.0]; the gradients are those of log_prob(x).sum().
_IG_LOG_PROB = [-2.099739069769129, -1.4189385332046727, -1.9778300510328644,
                -6.0444998767261175]
_IG_GRAD_CONC = [3.167482830347359, -0.72963715453852152, -0.70315664064524308,
                 -1.766943292197791]
_IG_GRAD_RATE = [-2.8333333333333335, 2.0, 0.75, 1.1333333333333333]
_IG_MEAN = [math.inf, 1.0, 1.3333333333333333, 1.0]
_IG_MODE = [0.6666666666666666, 0.2, 0.5714285714285714, 0.6]
_IG_VARIANCE = [math.inf, math.inf, 3.5555555555555554, 0.5]
_IG_ENTROPY = [4.017629981956834, 0.594845646858369, 1.016781808774514, 0.609783415737164]


def test_inverse_gamma_matches_torch_2_6():
    D = ember.distributions
    c = ember.tensor([0.5, 1.5, 2.5, 4.0], dtype=ember.float64, requires_grad=True)
    r = ember.tensor([1.0, 0.5, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    d = D.InverseGamma(c, r)
    lp = d.log_prob(ember.tensor([0.3, 1.0, 2.0, 5.0], dtype=ember.float64))
    np.testing.assert_allclose(lp.detach().numpy(), _IG_LOG_PROB, rtol=1e-12)
    gc, gr = ember.autograd.grad(lp.sum(), [c, r])
    np.testing.assert_allclose(gc.numpy(), _IG_GRAD_CONC, rtol=1e-10)
    np.testing.assert_allclose(gr.numpy(), _IG_GRAD_RATE, rtol=1e-12)
    for got, want in [(d.mean, _IG_MEAN), (d.mode, _IG_MODE), (d.variance, _IG_VARIANCE),
                      (d.entropy(), _IG_ENTROPY)]:
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    assert d.batch_shape == (4,) and d.event_shape == ()
    assert repr(d.support) == "GreaterThan(lower_bound=0.0)" and repr(d) == "InverseGamma()"
    wide = d.expand((2, 4))
    assert type(wide) is D.InverseGamma and wide.batch_shape == (2, 4)
    assert D.InverseGamma is D.inverse_gamma.InverseGamma and "InverseGamma" in D.__all__
    assert d.has_rsample and isinstance(d.transforms[0], D.PowerTransform)


def test_inverse_gamma_rsample_and_validation():
    D = ember.distributions
    ember.manual_seed(0)
    c = ember.tensor([3.0, 5.0], requires_grad=True)
    s = D.InverseGamma(c, ember.tensor([2.0, 1.0])).rsample((20000,))
    assert s.shape == (20000, 2) and bool((s > 0).all())
    # The mean rate / (concentration - 1) within a few standard errors.
    np.testing.assert_allclose(s.mean(0).detach().numpy(), [1.0, 0.25], rtol=0.05)
    s.sum().backward()
    assert c.grad is not None
    # PyTorch 2.6's message: the Gamma it is built on checks the parameters.
    with pytest.raises(ValueError, match="Expected parameter concentration .* of distribution "
                                         "Gamma"):
        D.InverseGamma(ember.tensor([-1.0]), ember.tensor([1.0]), validate_args=True)


# Made with PyTorch 2.6: PositiveDefiniteTransform()(A) and its inverse for this A (float64).
_PD_A = [[0.5, 0.1, -0.3], [0.2, -0.4, 0.7], [1.0, -2.0, 0.25]]
_PD_Y = [[2.7182818284590455, 0.32974425414002567, 1.6487212707001282],
         [0.32974425414002567, 0.48932896411722165, -1.1406400920712787],
         [1.6487212707001282, -1.1406400920712787, 6.648721270700128]]


def test_positive_definite_transform_matches_torch_2_6():
    D = ember.distributions
    t = D.transforms.PositiveDefiniteTransform()
    assert D.PositiveDefiniteTransform is t.__class__ and "PositiveDefiniteTransform" in D.__all__
    a = ember.tensor(_PD_A, dtype=ember.float64)
    y = t(a)
    np.testing.assert_allclose(y.numpy(), _PD_Y, rtol=1e-14)
    np.testing.assert_allclose(t.inv(y).numpy(), np.tril(_PD_A), rtol=1e-12, atol=1e-14)
    assert repr(t.domain) == "IndependentConstraint(Real(), 2)"
    assert repr(t.codomain) == "PositiveDefinite()"
    assert not t.bijective and t.event_dim == 2 and repr(t) == "PositiveDefiniteTransform()"
    assert t == D.transforms.PositiveDefiniteTransform() and t != D.transforms.ExpTransform()
    assert bool(t.codomain.check(t(ember.randn(4, 3, 3, dtype=ember.float64))).all())
    with pytest.raises(NotImplementedError):
        t.log_abs_det_jacobian(a, y)


# ================================================================================================
# torch.utils.data: StackDataset (2.6), _DatasetKind, DataPipes
# ================================================================================================


def test_stack_dataset_matches_torch_2_6():
    # The values PyTorch 2.6 gives for these calls.
    data = ember.utils.data
    s = data.StackDataset([1, 2, 3], "abc")
    assert len(s) == 3 and s[1] == (2, "b") and s.__getitems__([0, 2]) == [(1, "a"), (3, "c")]
    s = data.StackDataset(x=[1, 2, 3], y="abc")
    assert s[2] == {"x": 3, "y": "c"} and s.__getitems__([1]) == [{"x": 2, "y": "b"}]
    for args, kwargs, msg in [((), {}, "At least one dataset should be passed"),
                              (([1], [1, 2]), {}, "Size mismatch between datasets"),
                              (([1],), {"y": [1]}, "Supported either ``tuple``- \\(via"),
                              ((), {"x": [1], "y": [1, 2]}, "Size mismatch between datasets")]:
        with pytest.raises(ValueError, match=msg):
            data.StackDataset(*args, **kwargs)
    batches = list(data.DataLoader(data.StackDataset([1, 2, 3], [4.0, 5.0, 6.0]), batch_size=2))
    assert [[b.tolist() for b in batch] for batch in batches] == [[[1, 2], [4.0, 5.0]],
                                                                  [[3], [6.0]]]
    assert batches[0][1].dtype == ember.float64

    class Batched(data.Dataset):  # a nested dataset's __getitems__ is used
        def __getitem__(self, i):
            raise AssertionError("read one at a time")

        def __getitems__(self, indices):
            return [i * 10 for i in indices]

        def __len__(self):
            return 4

    assert data.StackDataset(Batched(), "abcd").__getitems__([3, 1]) == [(30, "d"), (10, "b")]


def _both(fn):
    """fn(torch.utils.data) and fn(ember.utils.data), which must agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = fn(torch.utils.data), fn(ember.utils.data)
    assert _plain(got) == _plain(want)
    return got


def _plain(x):
    """Tensors as lists, so that torch's and ember's results compare."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return ("tensor", x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__ if type(x).__name__ != "DataChunk" else "list",
                [_plain(v) for v in x])
    return x


def _errors(fn):
    """The exception type and message of fn(), or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def test_dataset_kind_and_fetchers_match_torch():
    def run(d):
        out = [d._DatasetKind.Map, d._DatasetKind.Iterable]
        f = d._DatasetKind.create_fetcher(d._DatasetKind.Iterable, range(5), True, list, False)
        out += [f.fetch([0, 0]), f.fetch([0, 0]), f.fetch([0, 0]), _errors(lambda: f.fetch([0]))]
        f = d._DatasetKind.create_fetcher(d._DatasetKind.Iterable, range(5), True, list, True)
        out += [f.fetch([0, 0, 0]), _errors(lambda: f.fetch([0, 0, 0]))]
        f = d._DatasetKind.create_fetcher(d._DatasetKind.Iterable, range(2), False, str, False)
        out += [f.fetch(None), f.fetch(None), _errors(lambda: f.fetch(None))]
        f = d._DatasetKind.create_fetcher(d._DatasetKind.Map, [10, 11, 12], True,
                                          d.default_collate, False)
        out += [f.fetch([2, 0])]
        f = d._DatasetKind.create_fetcher(d._DatasetKind.Map, [10, 11, 12], False, str, False)
        out += [f.fetch(1)]
        return out

    _both(run)
    assert "_DatasetKind" in ember.utils.data.__all__
    from ember.utils.data._utils.collate import default_collate
    assert default_collate is ember.utils.data.default_collate


def _pipelines(d):
    IW = d.datapipes.iter.IterableWrapper
    out = []
    out.append(list(IW(range(6)).map(lambda x: x * 2)))
    out.append(list(IW(range(10)).filter(lambda x: x % 3 == 0)))
    out.append(list(IW(range(7)).batch(3)))
    out.append(list(IW(range(7)).batch(3, drop_last=True)))
    out.append(type(next(iter(IW(range(7)).batch(3)))).__name__)
    out.append([len(IW(range(7)).batch(3)), len(IW(range(7)).batch(3, drop_last=True))])
    out.append(list(IW(range(7)).batch(3).unbatch()))
    out.append(list(IW([[1, [2, 3]], [4]]).unbatch(unbatch_level=-1)))
    out.append(_errors(lambda: list(IW([1, 2]).unbatch(2))))
    out.append(list(IW(range(4)).zip(IW(range(3)))))
    out.append(list(IW(range(2)).concat(IW(range(3)))))
    out.append(list(IW(range(3)).mux(IW(range(10, 15)), IW(range(20, 22)))))
    out.append(len(IW(range(3)).mux(IW(range(10, 15)))))
    out.append(list(IW(range(10)).shuffle().set_seed(3)))
    out.append(list(IW(range(10)).shuffle(buffer_size=3).set_seed(5)))
    out.append(list(IW(range(10)).shuffle().set_shuffle(False)))
    out.append(sorted(IW(range(10)).shuffle()))
    out.append(list(IW(range(9)).groupby(lambda x: x % 3, buffer_size=4)))
    out.append(list(IW(range(6)).groupby(lambda x: x % 2, group_size=2)))
    out.append(list(IW(range(5)).batch(2).collate()))
    out.append(list(IW([(1, 2), (3, 4)]).map(lambda a, b: a + b, input_col=[0, 1])))
    out.append(list(IW([[1, 2], [3, 4]]).map(lambda a: -a, input_col=1, output_col=-1)))
    out.append(list(IW([{"a": 1}, {"a": 2}]).map(lambda a: a * 10, input_col="a",
                                                  output_col="b")))
    out.append(list(IW([(1, 2), (3, 4)]).filter(lambda a: a > 1, input_col=0)))
    e = _errors(lambda: IW([1]).map(lambda a, b: a, input_col=0))
    out.append((e[0], e[1].split(" at 0x")[0][:26], e[1][-45:]))
    out.append(_errors(lambda: IW([1]).map(lambda a: a, output_col=1)))
    out.append(_errors(lambda: list(IW(range(3)).filter(lambda x: 1)))[0])
    sf = d.datapipes.iter.ShardingFilter(IW(range(10)))
    sf.apply_sharding(3, 1)
    out.append([list(sf), len(sf), sf.is_shardable()])
    out.append([list(d.datapipes.iter.Sampler(IW(range(4)))),
                len(d.datapipes.iter.Sampler(IW(range(4))))])
    a, b = IW(range(6)).fork(2)
    out.append([list(a), list(b)])
    a, b = IW(range(6)).fork(2)
    ia = iter(a)
    out.append([next(ia), next(ia), list(b), list(ia)])
    out.append(IW(range(3)).fork(1).__class__.__name__)
    ev, od = IW(range(7)).demux(2, lambda x: x % 2)
    out.append([list(ev), list(od)])
    ev, od = IW([0, 1, None, 3]).demux(2, lambda x: None if x is None else x % 2, drop_none=True)
    out.append([list(ev), list(od)])
    out.append(_errors(lambda: IW(range(3)).fork(0)))
    out.append(_errors(lambda: list(IW(range(3)).demux(2, lambda x: 5)[0]))[0])
    out.append([len(IW(range(6)).map(str)), len(IW([1, 2]).concat(IW([3])))])
    out.append(_errors(lambda: len(IW(range(6)).filter(bool))))
    out.append(_errors(lambda: len(IW(range(6)).filter(bool).map(str))))
    out.append(_errors(lambda: len(IW([1]).concat(IW([1]).filter(bool)))))
    out.append(_errors(lambda: IW([1]).concat()))
    out.append(_errors(lambda: IW([1]).concat([1])))
    out.append(_errors(lambda: IW([1]).zip([1])))
    out.append(_errors(lambda: IW([1]).batch(0)))
    out.append([repr(IW([1])), str(IW([1]).map(str))])
    out.append(list(d.DataLoader(IW(range(10)).map(_double), batch_size=4)))
    out.append(list(d.DataLoader(IW(range(5)).batch(2), batch_size=None)))
    return out


def _double(x):
    return 2 * x


def test_iter_datapipes_match_torch():
    _both(_pipelines)


def test_map_datapipes_match_torch():
    def run(d):
        m = d.datapipes.map.SequenceWrapper(list(range(8)))
        out = [m[1], len(m), m.map(lambda v: -v)[2], len(m.map(lambda v: v))]
        out += [m.batch(3)[2], len(m.batch(3)), len(m.batch(3, drop_last=True))]
        out += [_errors(lambda: m.batch(3)[5]), _errors(lambda: m.batch(3, drop_last=True)[2])]
        out += [m.concat(m)[9], len(m.concat(m)), _errors(lambda: m.concat(m)[16])]
        out += [m.zip(m.map(lambda x: -x))[3], len(m.zip(m.batch(2)))]
        out += [_errors(lambda: m.zip(m.batch(2))[5])]
        out += [list(m.shuffle().set_seed(7)), len(m.shuffle()), sorted(m.shuffle())]
        out += [list(m.shuffle(indices=[1, 3, 5]).set_shuffle(False))]
        out += [type(m.shuffle()).__name__, isinstance(m.shuffle(), d.IterDataPipe)]
        out += [_errors(lambda: m.concat()), _errors(lambda: m.concat([1]))]
        out += [d.datapipes.map.Mapper(m)[4], repr(m), sorted(d.MapDataPipe.functions)]
        out += [list(d.DataLoader(m.map(lambda x: x * 2), batch_size=3))]
        return out

    _both(run)


def test_single_iterator_per_iter_datapipe_matches_torch():
    def run(d):
        IW = d.datapipes.iter.IterableWrapper
        out = []
        p = IW(range(5))
        a = iter(p)
        out.append(next(a))
        b = iter(p)  # not started: a is still valid
        out.append(next(a))
        out.append(next(b))  # b starts: a is invalid
        e = _errors(lambda: next(a))
        out.append((e[0], e[1].split("\n")[0]))
        out.append(list(b))
        # Each new iterator resets: a Shuffler without a seed draws a new one from the
        # framework's generator.
        out.append(list(p))

        class Own(d.IterDataPipe):  # __iter__ returns self: one iterator only
            def __init__(self):
                self.i = 0

            def __iter__(self):
                return self

            def __next__(self):
                self.i += 1
                if self.i > 3:
                    raise StopIteration
                return self.i

        out.append(list(Own()))
        out.append(Own()._number_of_samples_yielded)
        own = Own()
        list(own)
        out.append(own._number_of_samples_yielded)

        class Boom(d.IterDataPipe):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                yield 1
                raise KeyError("boom")

        out.append(_errors(lambda: list(Boom(3))))
        out.append(_errors(lambda: list(IW([1]).map(_raise_value_error))))
        a, b = IW(range(3)).fork(2)
        ia = iter(a)
        next(ia)
        list(a)  # a new iterator of one child restarts them all
        out.append(_errors(lambda: next(ia))[1].split(",")[0])
        return out

    _both(run)


def test_dataloader_over_datapipes_matches_torch():
    def run(d):
        framework = torch if d is torch.utils.data else ember
        IW = d.datapipes.iter.IterableWrapper

        def batches(dl):
            return [x.tolist() for x in dl]

        out = [batches(d.DataLoader(IW(range(8)).shuffle(), batch_size=4, shuffle=False))]
        # shuffle=True (or a Shuffler left on): a new order at each epoch.
        for shuffle in (True, None):
            dl = d.DataLoader(IW(range(8)).shuffle(), batch_size=4, shuffle=shuffle)
            first, second = batches(dl), batches(dl)
            out.append([first != second, sorted(sum(first, []))])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dl = d.DataLoader(IW(range(8)), batch_size=4, shuffle=True)
        out.append([str(w.message)[:60] for w in caught])
        out.append(sorted(sum(batches(dl), [])))
        runs = []
        for _ in range(2):  # the loader's generator fixes the Shufflers' seeds
            g = framework.Generator()
            g.manual_seed(1)
            runs.append(batches(d.DataLoader(IW(range(8)).shuffle(), batch_size=4,
                                              generator=g)))
        out.append(runs[0] == runs[1])
        dp = IW(range(10)).sharding_filter().map(_double)
        d.graph_settings.apply_sharding(dp, 4, 1)
        out.append(list(dp))
        out.append(_errors(lambda: d.graph_settings.apply_sharding(
            IW(range(3)).sharding_filter().sharding_filter(), 2, 0))[0])
        dp = IW([1]).zip(IW([2]).map(_double))
        pipes = d.graph_settings.get_all_graph_pipes(d.graph.traverse_dps(dp))
        out.append([type(p).__name__ for p in pipes])
        graph = d.graph.traverse_dps(dp)
        out.append([(type(v[0]).__name__, len(v[1])) for v in graph.values()])

        class Typed(d.IterDataPipe[int]):
            def __iter__(self):
                yield from (1, 2)

        out.append(list(Typed()))
        return out

    _both(run)


def _raise_value_error(x):
    raise ValueError("bad item")


def test_functional_datapipe_and_decorators_match_torch():
    def run(d):
        class P(d.IterDataPipe):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                yield from range(self.n)

        name = "twice_for_test"  # each framework has its own table

        @d.functional_datapipe(name)
        class Twice(d.IterDataPipe):
            def __init__(self, dp, k=2):
                self.dp, self.k = dp, k

            def __iter__(self):
                for x in self.dp:
                    for _ in range(self.k):
                        yield x

        out = [list(getattr(P(3), name)()), list(getattr(P(2), name)(k=3))]
        out.append(_errors(lambda: d.functional_datapipe(name)(Twice)))
        out.append(_errors(lambda: P(1).no_such_function))
        out.append(name in d.IterDataPipe.functions)
        del d.IterDataPipe.functions[name]

        @d.functional_datapipe("negate_" + name)
        class Neg(d.MapDataPipe):
            def __init__(self, dp):
                self.dp = dp

            def __getitem__(self, i):
                return -self.dp[i]

            def __len__(self):
                return len(self.dp)

        out.append(getattr(d.datapipes.map.SequenceWrapper([1, 2]), "negate_" + name)()[1])
        del d.MapDataPipe.functions["negate_" + name]

        @d.non_deterministic
        class ND(d.IterDataPipe):
            def __init__(self, dp):
                self.dp = dp

            def __iter__(self):
                yield from self.dp

        out.append(list(ND(P(2))))
        with d.guaranteed_datapipes_determinism():
            out.append(_errors(lambda: ND(P(2))))
        out.append(list(ND(P(1))))

        @d.non_deterministic(lambda dp, flag: flag)
        class ND2(d.IterDataPipe):
            def __init__(self, dp, flag):
                self.dp = dp

            def __iter__(self):
                yield from self.dp

        with d.guaranteed_datapipes_determinism():
            out.append(list(ND2(P(2), False)))
            out.append(_errors(lambda: ND2(P(2), True)))
        out.append(_errors(lambda: d.non_deterministic(int)))
        out.append(_errors(lambda: d.non_deterministic(3)))

        @d.argument_validation
        def g(dp: d.IterDataPipe[int], k=1):
            return k

        out += [g(P(2), k=5), _errors(lambda: g()), _errors(lambda: g(P(1), 2, 3))]
        out.append(_errors(lambda: d.runtime_validation(lambda: 1)))

        class R(d.IterDataPipe):
            @d.runtime_validation
            def __iter__(self):
                yield 1

        with d.runtime_validation_disabled():
            out.append(list(R()))
        out.append(_errors(lambda: list(R()))[0])
        c = d.DataChunk([1, 2, 3])
        out += [c, c.items, list(c.raw_iterator()), c.as_str("  "), isinstance(c, list)]
        out += [isinstance(P(1), d.IterableDataset), issubclass(d.MapDataPipe, d.Dataset),
                issubclass(d.DFIterDataPipe, d.IterDataPipe), d.DFIterDataPipe()._is_dfpipe()]
        return out

    _both(run)
    assert {"map", "filter", "batch", "shuffle", "zip", "concat", "fork", "demux", "mux",
            "groupby", "unbatch", "collate", "sharding_filter"} <= \
        set(ember.utils.data.IterDataPipe.functions)


_module_lambda = lambda x: x  # noqa: E731


def test_unpicklable_functions_warn_as_torch():
    IW = ember.utils.data.datapipes.iter.IterableWrapper
    with pytest.warns(UserWarning, match="Lambda function is not supported by pickle"):
        IW([1]).map(_module_lambda)
    with pytest.warns(UserWarning, match="Local function is not supported by pickle"):
        IW([1]).map(lambda x: x)  # a lambda in a function is a local function first
    with pytest.raises(TypeError, match="A callable function is expected, but <class 'int'>"):
        IW([1]).map(3)
    with pytest.warns(FutureWarning, match="The argument `drop_empty_batches` of"):
        IW([1]).filter(bool, drop_empty_batches=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        IW([1]).map(functools.partial(max, 0))


# ================================================================================================
# torch.nn: grad, Container, UninitializedBuffer, common_types, factory_kwargs
# ================================================================================================

_CONV_CASES = [  # (dims, input shape, weight shape, stride, padding, dilation, groups)
    (1, (2, 4, 11), (6, 2, 3), 2, 1, 1, 2),
    (1, (1, 3, 9), (2, 3, 4), 1, 0, 2, 1),
    (2, (2, 4, 7, 6), (6, 2, 3, 2), 2, 1, 1, 2),
    (2, (1, 2, 8, 9), (3, 2, 3, 3), (1, 2), (2, 0), (2, 1), 1),
    (3, (1, 2, 5, 6, 4), (4, 2, 2, 3, 2), 1, 1, 1, 1),
    (3, (2, 4, 6, 5, 5), (4, 1, 3, 2, 2), (2, 1, 2), 0, (1, 2, 1), 4),
]


@pytest.mark.parametrize("case", _CONV_CASES)
def test_nn_grad_matches_torch(case):
    dims, xs, ws, stride, padding, dilation, groups = case
    rng = np.random.default_rng(dims)
    x = torch.from_numpy(rng.standard_normal(xs))
    w = torch.from_numpy(rng.standard_normal(ws))
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    go = torch.from_numpy(rng.standard_normal(conv(x, w, None, stride, padding, dilation,
                                                   groups).shape))
    args = (stride, padding, dilation, groups)
    tg, eg = torch.nn.grad, nn.grad
    name = f"conv{dims}d"
    close(getattr(eg, name + "_input")(list(xs), E(w), E(go), *args),
          getattr(tg, name + "_input")(list(xs), w, go, *args), rtol=1e-10, atol=1e-12)
    close(getattr(eg, name + "_weight")(E(x), ws, E(go), *args),
          getattr(tg, name + "_weight")(x, ws, go, *args), rtol=1e-10, atol=1e-12)
    # Keywords as PyTorch names them.
    close(getattr(eg, name + "_input")(input_size=xs, weight=E(w), grad_output=E(go),
                                       stride=stride, padding=padding, dilation=dilation,
                                       groups=groups),
          getattr(tg, name + "_input")(xs, w, go, *args), rtol=1e-10, atol=1e-12)


def test_nn_grad_is_differentiable_and_default_args():
    x = torch.randn(2, 3, 6, 5, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, requires_grad=True)
    go = torch.randn(2, 4, 4, 3, dtype=torch.float64, requires_grad=True)
    tgi = torch.nn.grad.conv2d_input(x.shape, w, go)
    (tgi * tgi).sum().backward()
    ew, ego = E(w).requires_grad_(), E(go).requires_grad_()
    egi = nn.grad.conv2d_input(x.shape, ew, ego)
    close(egi, tgi, rtol=1e-12)
    (egi * egi).sum().backward()
    close(ew.grad, w.grad, rtol=1e-10)
    close(ego.grad, go.grad, rtol=1e-10)
    with ember.no_grad():  # no graph without grad mode
        assert nn.grad.conv2d_weight(E(x), w.shape, ego).grad_fn is None
    assert nn.grad.conv2d_weight(E(x), w.shape, E(go)).requires_grad is False
    assert nn.grad.__all__ == ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
                               "conv3d_input", "conv3d_weight"]


def test_container_is_deprecated_as_torch():
    with pytest.warns(UserWarning, match="nn.Container is deprecated. All of it's functionality"):
        c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert isinstance(c, nn.Module) and [n for n, _ in c.named_children()] == ["a", "b"]
    assert [n for n, _ in c.named_parameters()] == ["a.weight", "a.bias"]
    assert nn.Container is nn.modules.container.Container


def test_uninitialized_buffer():
    b = nn.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and isinstance(b, ember.Tensor)
    assert not b.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized "
                                           "parameter or buffer"):
        b.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        b.share_memory_()
    m = nn.Module()
    m.register_buffer("running_mean", b)
    b.materialize((3, 2))
    assert b.shape == (3, 2) and b.dtype == ember.float32
    assert m.running_mean.shape == (3, 2) and "running_mean" in m.state_dict()
    assert not isinstance(b, nn.UninitializedBuffer)
    b = nn.UninitializedBuffer(dtype=ember.float64)
    b.materialize(4)
    assert b.shape == (4,) and b.dtype == ember.float64
    b = nn.UninitializedBuffer(requires_grad=True)
    b.materialize((2,), dtype=ember.float16)
    assert b.dtype == ember.float16 and b.requires_grad
    assert nn.UninitializedBuffer is nn.parameter.UninitializedBuffer


def test_common_types_and_factory_kwargs_match_torch():
    tc, ec = torch.nn.common_types, nn.common_types
    names = [n for n in vars(tc) if n.startswith("_") and n.endswith("_t")]
    assert len(names) == 22
    for n in names:
        assert repr(getattr(ec, n)).replace("ember._C.Tensor", "torch.Tensor") == \
            repr(getattr(tc, n)), n
    cases = [None, {}, {"device": "cpu"}, {"dtype": 1, "memory_format": 2},
             {"factory_kwargs": {"dtype": 3}, "device": "cpu"},
             {"factory_kwargs": {"device": "x"}, "device": "cpu"}, {"bias": True}]
    for kw in cases:
        assert _errors(lambda: nn.factory_kwargs(kw)) == _errors(
            lambda: torch.nn.factory_kwargs(kw))
        if _errors(lambda: nn.factory_kwargs(kw)) is None:
            assert nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)


# ================================================================================================
# torch.nn.functional: lp_pool3d, LPPool3d (PyTorch 2.6), grid_sample tables, assert_int_or_pair
# ================================================================================================

# Made with PyTorch 2.6 (chroot /var/cache/ember-trixie/root python3): for
# x = sin(arange(480) * 0.37).reshape(2, 3, 4, 5, 4) * 2 + 0.5 in float64 (abs(x) for p = 1.5),
# F.lp_pool3d(x, p, kernel, stride, ceil_mode): its shape, first 12 values, sum, and the sum of
# |d sum / dx|.
_LP3D = [
    ((2.0, 2, None, False), (2, 3, 2, 2, 2),
     [5.328815535355355, 5.097186071733922, 3.0023037694466, 3.0938171026300747,
      3.5210627494795106, 2.997854181625577, 4.621833960892853, 5.225424394444278,
      3.7839186523055175, 4.636439957087401, 4.747361918385621, 3.906440816447757],
     199.60735798824447, 120.82791228433746),
    ((3.0, (2, 3, 2), (1, 2, 2), True), (2, 3, 3, 2, 2),
     [3.9116225692097553, 3.617768034124502, 2.035512312923103, 3.120251561384721,
      3.297703310480822, 2.2976088559245436, 3.4969324549347434, 3.8777455366444427,
      1.711145153737294, 2.057600206219192, 3.939475390653477, 3.949291080118527],
     227.69441307322523, 217.31809126113504),
    ((1.5, (3, 2, 2), 1, False), (2, 3, 2, 4, 3),
     [8.779772119204756, 8.486727082533847, 7.970259067580088, 6.846180512524283,
      6.169486493293484, 5.883196198621056, 5.8787780969765135, 5.984731650593044,
      6.5513964189438685, 7.753077015903546, 8.284032280813625, 8.699092452685901],
     1060.8499166190995, 688.7429784864233),
]


@pytest.mark.parametrize("index", range(len(_LP3D)))
def test_lp_pool3d_matches_torch_2_6(index):
    (p, k, s, c), shape, first, total, grad_total = _LP3D[index]
    x = ember.from_numpy(np.sin(np.arange(480) * 0.37).reshape(2, 3, 4, 5, 4) * 2 + 0.5)
    x = (x.abs() if p == 1.5 else x).requires_grad_()
    y = F.lp_pool3d(x, p, k, s, c)
    assert tuple(y.shape) == shape
    np.testing.assert_allclose(y.detach().numpy().ravel()[:12], first, rtol=1e-12)
    np.testing.assert_allclose(float(y.sum()), total, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(float(x.grad.abs().sum()), grad_total, rtol=1e-10)
    m = nn.LPPool3d(p, k, s, c)
    np.testing.assert_array_equal(m(x).detach().numpy(), y.detach().numpy())
    # Unbatched (C, D, H, W) too.
    np.testing.assert_allclose(F.lp_pool3d(x[0], p, k, s, c).detach().numpy(),
                               y[0].detach().numpy(), rtol=1e-14)


def test_lp_pool3d_module():
    assert repr(nn.LPPool3d(2, 3, 2)) == \
        "LPPool3d(norm_type=2, kernel_size=3, stride=2, ceil_mode=False)"  # PyTorch 2.6's
    assert nn.LPPool3d is nn.modules.pooling.LPPool3d and "LPPool3d" in \
        nn.modules.pooling.__all__


def test_functional_tables_and_assert_int_or_pair_match_torch():
    tf = torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == tf.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == tf.GRID_SAMPLE_PADDING_MODES
    for arg in (3, (1, 2), [4, 5]):
        assert F.assert_int_or_pair(arg, "kernel_size", "{} must be int or pair") is None
    for arg in ((1, 2, 3), []):
        assert _errors(lambda: F.assert_int_or_pair(arg, "kernel_size", "{} is bad")) == \
            _errors(lambda: tf.assert_int_or_pair(arg, "kernel_size", "{} is bad")) == \
            ("AssertionError", "kernel_size is bad")


# ================================================================================================
# torch.linalg.diagonal and torch.linalg.matmul
# ================================================================================================


def test_linalg_diagonal_and_matmul_match_torch():
    a = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    for kw in ({}, {"offset": 1}, {"offset": -2}, {"dim1": 0, "dim2": 3},
               {"offset": 2, "dim1": -1, "dim2": 1}):
        close(ember.linalg.diagonal(E(a), **kw), torch.linalg.diagonal(a, **kw), rtol=0)
    ea = E(a).requires_grad_()
    ember.linalg.diagonal(ea, offset=1).sum().backward()
    ta = a.clone().requires_grad_()
    torch.linalg.diagonal(ta, offset=1).sum().backward()
    close(ea.grad, ta.grad, rtol=0)
    with pytest.raises(TypeError):
        ember.linalg.diagonal(E(a), 1)  # offset is keyword-only, as PyTorch's
    with pytest.raises(IndexError, match="(?i)dimension out of range"):
        ember.linalg.diagonal(ember.zeros(3))
    b = torch.randn(5, 2, dtype=torch.float64)
    close(ember.linalg.matmul(E(a), E(b)), torch.linalg.matmul(a, b), rtol=1e-12)
    close(ember.linalg.matmul(E(b[:, 0]), E(b[:, 1])), torch.linalg.matmul(b[:, 0], b[:, 1]),
          rtol=1e-12)
    out = ember.empty(2, 3, 4, 2, dtype=ember.float64)
    assert ember.linalg.matmul(E(a), E(b), out=out) is out
    close(out, a @ b, rtol=1e-12)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        ember.linalg.matmul(ember.zeros(3), ember.zeros(4))


def test_spectral_and_complex_helpers():
    import warnings
    for n, periodic, beta in [(1, True, 12.0), (8, True, 12.0), (9, False, 5.0)]:
        np.testing.assert_allclose(
            ember.kaiser_window(n, periodic, beta).numpy(),
            torch.kaiser_window(n, periodic, beta).numpy(), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in [(0, 4), (1, 2, 0.25), (5, 1, -2)]:
            np.testing.assert_array_equal(ember.range(*args).numpy(), torch.range(*args).numpy())
    a = torch.randn(3, 4, 5, dtype=torch.float64)
    ea = ember.from_numpy(a.numpy().copy())
    np.testing.assert_allclose(ember.nuclear_norm(ea[0]).numpy(), torch.nuclear_norm(a[0]).numpy())
    with pytest.raises(RuntimeError, match="2 dimensions"):
        ember.nuclear_norm(ea)
    np.testing.assert_allclose(ember.nuclear_norm(ea, (0, 2)).numpy(),
                               torch.nuclear_norm(a, (0, 2)).numpy())
    np.testing.assert_allclose(ember.frobenius_norm(ea, (1, 2)).numpy(),
                               torch.frobenius_norm(a, (1, 2)).numpy())
    z = torch.randn(4, dtype=torch.complex64)
    ez = ember.from_numpy(z.numpy().copy())
    np.testing.assert_array_equal(ember.view_as_real_copy(ez).numpy(),
                                  torch.view_as_real_copy(z).numpy())
    assert ember.view_as_real_copy(ez).data_ptr() != ez.data_ptr()
    ez.conj_physical_()
    np.testing.assert_array_equal(ez.numpy(), z.conj().resolve_conj().numpy())
    rows, cols = ember.unravel_index(ember.tensor([0, 5, 11, -1]), (3, 4))
    assert rows.tolist() == [0, 1, 2, 2] and cols.tolist() == [0, 1, 3, 3]


def _e(t):
    return ember.from_numpy(t.detach().numpy().copy())


def test_batch_norm_pieces_match_torch():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    ex = _e(x)
    # batch_norm_update_stats: the batch's mean and biased variance, running stats updated.
    rm, rv = torch.zeros(3), torch.ones(3)
    erm, erv = _e(rm), _e(rv)
    want = torch.batch_norm_update_stats(x, rm, rv, 0.1)
    got = ember.batch_norm_update_stats(ex, erm, erv, 0.1)
    for g, w in zip(list(got) + [erm, erv], list(want) + [rm, rv]):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    # The SyncBatchNorm steps (PyTorch 1.13 has them for CUDA only): against their definitions.
    mean, invstd = ember.batch_norm_stats(ex, 1e-5)
    np.testing.assert_allclose(mean.numpy(), x.mean((0, 2)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd.numpy(), (x.var((0, 2), unbiased=False) + 1e-5).rsqrt(),
                               rtol=1e-5)
    w, b = torch.randn(3), torch.randn(3)
    y = ember.batch_norm_elemt(ex, _e(w), _e(b), mean, invstd, 1e-5)
    np.testing.assert_allclose(y.numpy(), F.batch_norm(ex, None, None, _e(w), _e(b), True).numpy(),
                               rtol=1e-4, atol=1e-5)
    # Two ranks' statistics gathered: the union's, equal with one count or per-rank counts.
    m2, i2 = ember.batch_norm_stats(_e(x[2:]), 1e-5)
    m1, i1 = ember.batch_norm_stats(_e(x[:2]), 1e-5)
    both = (ember.stack([m1, m2]), ember.stack([i1, i2]))
    g1 = ember.batch_norm_gather_stats(ex, *both, None, None, 0.1, 1e-5, 10)
    g2 = ember.batch_norm_gather_stats_with_counts(ex, *both, None, None, 0.1, 1e-5,
                                                   ember.tensor([10.0, 10.0]))
    for g in (g1, g2):
        np.testing.assert_allclose(g[0].numpy(), mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g[1].numpy(), invstd.numpy(), rtol=1e-5)
    dy = torch.randn(4, 3, 5)
    sum_dy, sum_dy_xmu, gw, gb = ember.batch_norm_backward_reduce(_e(dy), ex, mean, invstd,
                                                                  _e(w), True, True, True)
    gx = ember.batch_norm_backward_elemt(_e(dy), ex, mean, invstd, _e(w), sum_dy, sum_dy_xmu,
                                         ember.tensor([10, 10], dtype=ember.int32))
    xt = x.clone().requires_grad_()
    wt = w.clone().requires_grad_()
    torch.nn.functional.batch_norm(xt, None, None, wt, b, True).backward(dy)
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_native_dropout_norm_except_dim_and_inplace_dropouts():
    x = torch.randn(4, 3, 2)
    ex = _e(x)
    out, mask = ember.native_dropout(ex, 0.5, True)
    assert mask.dtype == ember.bool and out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x.numpy() * 2, 0), rtol=1e-6)
    out, mask = ember.native_dropout(ex, 0.5, False)
    assert bool(mask.all()) and out.data_ptr() != ex.data_ptr()
    out, _ = ember.native_dropout(ex, 1.0, None)
    assert not out.isnan().any() and float(out.abs().sum()) == 0
    for dim in (0, 1, 2, -1):
        np.testing.assert_allclose(ember.norm_except_dim(ex, 2, dim).numpy(),
                                   torch.norm_except_dim(x, 2, dim).numpy(), rtol=1e-5)
    np.testing.assert_allclose(ember.norm_except_dim(ex, 1, 1).numpy(),
                               torch.norm_except_dim(x, 1, 1).numpy(), rtol=1e-5)
    y = _e(x)
    assert ember.dropout_(y, 0.5, False) is y
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    ember.feature_dropout_(y, 1.0, True)
    assert float(y.abs().sum()) == 0


def test_recurrent_cells_are_torch_level():
    torch.manual_seed(0)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    w_ih, w_hh = torch.randn(16, 3), torch.randn(16, 4)
    got = ember.lstm_cell(_e(x), [_e(h), _e(c)], _e(w_ih), _e(w_hh))
    want = torch.lstm_cell(x, [h, c], w_ih, w_hh)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        ember.gru_cell(_e(x), _e(h), _e(w_ih[:12]), _e(w_hh[:12])).numpy(),
        torch.gru_cell(x, h, w_ih[:12], w_hh[:12]).numpy(), rtol=1e-5, atol=1e-6)
    for name in ("rnn_tanh_cell", "rnn_relu_cell"):
        np.testing.assert_allclose(
            getattr(ember, name)(_e(x), _e(h), _e(w_ih[:4]), _e(w_hh[:4])).numpy(),
            getattr(torch, name)(x, h, w_ih[:4], w_hh[:4]).numpy(), rtol=1e-5, atol=1e-6)
    assert not hasattr(ember.nn.functional, "lstm_cell")  # as torch.nn.functional


def test_inference_mode_flag():
    assert not ember.is_inference_mode_enabled()
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        with ember.inference_mode(False):
            assert not ember.is_inference_mode_enabled() and ember.is_grad_enabled()
        assert ember.is_inference_mode_enabled()
    assert not ember.is_inference_mode_enabled() and ember.is_grad_enabled()

    @ember.inference_mode()
    def f():
        return ember.is_inference_mode_enabled()
    assert f() and not ember.is_inference_mode_enabled()

    @ember.inference_mode
    def g():
        return ember.is_inference_mode_enabled(), ember.is_grad_enabled()
    assert g() == (True, False)


def test_aten_recurrent_entry_points_match_torch():
    torch.manual_seed(0)
    for mode, cls in [("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU), ("rnn_tanh", torch.nn.RNN),
                      ("rnn_relu", torch.nn.RNN)]:
        for bidirectional, bias, proj in [(False, True, 0), (True, False, 0), (False, True, 3)]:
            if proj and mode != "lstm":
                continue
            kw = dict(proj_size=proj) if proj else {}
            if mode == "rnn_relu":
                kw["nonlinearity"] = "relu"
            m = cls(4, 5, num_layers=2, bias=bias, bidirectional=bidirectional, batch_first=True,
                    **kw)
            x = torch.randn(2, 3, 4)
            d = 2 if bidirectional else 1
            h0 = torch.randn(2 * d, 2, proj or 5)
            hx = [h0, torch.randn(2 * d, 2, 5)] if mode == "lstm" else h0
            params = [p.detach() for p in m._flat_weights]
            args = (params, bias, 2, 0.0, False, bidirectional, True)
            want = getattr(torch, mode)(x, hx, *args)
            ehx = [_e(t) for t in hx] if mode == "lstm" else _e(hx)
            got = getattr(ember, mode)(_e(x), ehx, [_e(p) for p in params], *args[1:])
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_aten_convolution_conv_tbc_and_grid_sampler_match_torch():
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 4, 9, 9), torch.randn(6, 2, 3, 3), torch.randn(6)
    for transposed in (False, True):
        wt = w if not transposed else torch.randn(4, 3, 3, 3)
        bt = b if not transposed else torch.randn(6)
        args = ((2, 1), (1, 0), (1, 1), transposed, (1, 0) if transposed else (0, 0), 2)
        np.testing.assert_allclose(
            ember.convolution(_e(x), _e(wt), _e(bt), *args).numpy(),
            torch.convolution(x, wt, bt, *args).numpy(), rtol=1e-4, atol=1e-4)
    t, wk, bk = torch.randn(7, 2, 3), torch.randn(3, 3, 5), torch.randn(5)
    for f in (ember.conv_tbc, F.conv_tbc):
        np.testing.assert_allclose(f(_e(t), _e(wk), _e(bk), 1).numpy(),
                                   torch.conv_tbc(t, wk, bk, 1).numpy(), rtol=1e-4, atol=1e-5)
    theta = torch.randn(2, 2, 3)
    grid = torch.affine_grid_generator(theta, (2, 4, 5, 6), False)
    np.testing.assert_allclose(ember.affine_grid_generator(_e(theta), (2, 4, 5, 6), False).numpy(),
                               grid.numpy(), rtol=1e-5, atol=1e-6)
    for mode, pad in [(0, 0), (1, 1), (0, 2)]:  # ember has no bicubic grid_sample yet
        for name in ("grid_sampler", "grid_sampler_2d"):
            np.testing.assert_allclose(
                getattr(ember, name)(_e(x), _e(grid), mode, pad, False).numpy(),
                getattr(torch, name)(x, grid, mode, pad, False).numpy(), rtol=1e-4, atol=1e-5)


def test_legacy_tensor_names_and_build_flags():
    x = torch.randn(3, 3)
    ex = _e(x)
    for name in ("eig", "lstsq", "solve"):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            getattr(ex, name)(ex)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert ex.volatile is False
    assert (ex.is_nested, ex.is_sparse_csr, ex.is_vulkan) == (False, False, False)
    y, ey = torch.arange(6.).reshape(2, 3), ember.arange(6.).reshape(2, 3)
    y.map_(torch.arange(3.), lambda a, b: a * 100 + b)
    ey.map_(ember.arange(3.), lambda a, b: a * 100 + b)
    np.testing.assert_array_equal(ey.numpy(), y.numpy())
    z, ez = torch.arange(3), ember.arange(3)
    z.map_(torch.ones(3, dtype=torch.long), lambda a, b: a * 2.7)
    ez.map_(ember.ones(3, dtype=ember.int64), lambda a, b: a * 2.7)
    np.testing.assert_array_equal(ez.numpy(), z.numpy())
    y.map2_(torch.ones(3), torch.full((2, 3), 2.0), lambda a, b, c: a + b * c)
    ey.map2_(ember.ones(3), ember.full((2, 3), 2.0), lambda a, b, c: a + b * c)
    np.testing.assert_array_equal(ey.numpy(), y.numpy())
    np.testing.assert_allclose(ember.i0_(ember.ones(2)).numpy(), torch.i0_(torch.ones(2)).numpy(),
                               rtol=1e-6)
    assert ember.has_lapack and ember.has_spectral and not ember.has_mps
    assert ember.is_vulkan_available() is False
    assert ember.has_mkldnn == ember.backends.mkldnn.is_available()


def test_autocast_setters():
    assert not ember.is_autocast_cpu_enabled()
    ember.set_autocast_cpu_enabled(True)
    try:
        assert ember.is_autocast_cpu_enabled()
        ember.set_autocast_cpu_dtype(ember.float16)
        assert ember.get_autocast_cpu_dtype() == ember.float16
        ember.set_autocast_dtype("cpu", ember.bfloat16)
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        ember.set_autocast_gpu_dtype(ember.bfloat16)
        assert ember.get_autocast_gpu_dtype() == ember.bfloat16
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_gpu_dtype(ember.float16)
    assert not ember.is_autocast_cpu_enabled()
    ember.set_autocast_enabled(False)  # 1.13's form: CUDA
    assert not ember.is_autocast_enabled()


def test_samplers_group_norm_stats_slice_copy_from_file_and_output_nr(tmp_path):
    ember.manual_seed(0)
    rates = ember.tensor([0.5, 4.0, 30.0]).expand(4000, 3)
    draws = ember.poisson(rates)
    assert draws.dtype == ember.float32 and bool((draws == draws.round()).all())
    np.testing.assert_allclose(draws.mean(0).numpy(), [0.5, 4.0, 30.0], rtol=0.08)
    b = ember.binomial(ember.full((4000,), 20.0), ember.full((4000,), 0.25, dtype=ember.float64))
    assert b.dtype == ember.float64 and abs(float(b.mean()) - 5.0) < 0.2
    with pytest.raises(NotImplementedError, match="default generator"):
        ember.poisson(rates, generator=ember.Generator())
    x = torch.randn(2, 6, 5)
    w, bias = torch.randn(6), torch.randn(6)
    want = torch.native_group_norm(x, w, bias, 2, 6, 5, 3, 1e-5)
    got = ember.native_group_norm(_e(x), _e(w), _e(bias), 2, 6, 5, 3, 1e-5)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)
    a = torch.arange(24.).reshape(2, 3, 4)
    for args in [(0, 0, 1, 1), (1, 1, 3, 1), (2, 0, 3, 2), (-1, 1, 4, 3)]:  # 1.13 wants all
        np.testing.assert_array_equal(ember.slice_copy(_e(a), *args).numpy(),
                                      torch.slice_copy(a, *args).numpy())
    path = str(tmp_path / "raw.bin")
    np.arange(10, dtype=np.float64).tofile(path)
    np.testing.assert_array_equal(
        ember.from_file(path, size=6, dtype=ember.float64).numpy(),
        torch.from_file(path, size=6, dtype=torch.float64).numpy())
    shared = ember.from_file(path, shared=True, size=10, dtype=ember.float64)
    shared[0] = 42.0
    del shared
    assert np.fromfile(path, dtype=np.float64)[0] == 42.0
    with pytest.raises(RuntimeError, match="EOF"):
        ember.from_file(path, size=20, dtype=ember.float64)
    leaf = ember.randn(3, requires_grad=True)
    assert leaf.output_nr == 0 and ember.randn(2).output_nr == 0
    tl = torch.randn(3, requires_grad=True)
    assert [p.output_nr for p in leaf.unbind(0)] == [p.output_nr for p in tl.unbind(0)]


def test_storages_match_torch():
    x, ex = torch.arange(6.).reshape(2, 3)[1], ember.arange(6.).reshape(2, 3)[1]
    s, es = x.storage(), ex.storage()
    assert isinstance(es, ember.TypedStorage) and es.type() == "ember.FloatStorage"
    assert (len(es), es.size(), es.nbytes(), es.element_size()) == \
        (len(s), s.size(), s.nbytes(), s.element_size())
    assert es.tolist() == s.tolist() and es[4] == s[4]
    assert es.data_ptr() == ex.data_ptr() - 3 * 4  # from the storage's first element
    assert ex.storage_type() is ember.FloatStorage and x.storage_type() is torch.FloatStorage
    es[3] = 30.0  # writes reach every tensor over the memory
    assert ex.tolist() == [30.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
        es[1:2]
    u, eu = x.storage().untyped(), ex.untyped_storage()
    assert isinstance(eu, ember.UntypedStorage) and eu.nbytes() == u.nbytes() == 24
    assert eu[0:4].tolist() == list(np.float32(0.0).tobytes())
    for cls, tcls, values in [(ember.LongStorage, torch.LongStorage, [1, 2, 3]),
                              (ember.BoolStorage, torch.BoolStorage, [True, False]),
                              (ember.DoubleStorage, torch.DoubleStorage, [0.5])]:
        e, t = cls(values), tcls(values)
        assert isinstance(e, ember.TypedStorage) and str(e.dtype)[6:] == str(t.dtype)[6:]
        assert e.tolist() == t.tolist() and repr(e).replace("ember", "torch") == repr(t)
    assert len(ember.FloatStorage(5)) == 5 and ember.UntypedStorage(7).nbytes() == 7
    shared = ember.TypedStorage(wrap_storage=ember.UntypedStorage([0, 0, 128, 63]),
                                dtype=ember.float32)
    assert shared.tolist() == [1.0]
    assert ember.IntStorage([4]).fill_(9).clone().tolist() == [9]


def test_futures_as_subclass_nesting_and_removed_devices():
    f = ember.futures.Future()
    assert ember.Future is ember.futures.Future and not f.done()
    chained = f.then(lambda fut: fut.value() + 1)
    import threading
    threading.Timer(0.05, lambda: f.set_result(3)).start()
    assert f.wait() == 3 and f.done() and chained.wait() == 4
    with pytest.raises(RuntimeError, match="completed once"):
        f.set_result(4)
    g = ember.futures.Future()
    g.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        g.wait()
    assert [x.value() for x in ember.futures.collect_all([f]).wait()] == [3]
    assert ember.futures.wait_all([f, chained]) == [3, 4]
    with pytest.raises(ValueError):
        ember.futures.wait_all([f, g])

    class Sub(ember.Tensor):
        pass
    x = ember.randn(3, requires_grad=True)
    z = x * 2
    y = z.as_subclass(Sub)
    assert type(y) is Sub and y.requires_grad and y.data_ptr() == z.data_ptr()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))
    with pytest.raises(RuntimeError, match="does not inherit from Tensor"):
        x.as_subclass(int)
    for name in ("xpu", "ipu"):
        with pytest.raises(RuntimeError, match=f"support for {name} devices"):
            getattr(x, name)()
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        x.reinforce(1)
    assert ember.autocast_increment_nesting() == 1
    assert ember.autocast_decrement_nesting() == 0
    with ember.autocast("cpu"):
        assert ember.autocast_increment_nesting() == 2
        ember.autocast_decrement_nesting()
    assert ember.autocast_increment_nesting() == 1 and ember.autocast_decrement_nesting() == 0


def test_dequantize_of_plain_tensors_is_float32():
    for dtype in ("float64", "float32", "int32"):
        t = torch.arange(3).to(getattr(torch, dtype))
        e = ember.arange(3).to(getattr(ember, dtype))
        np.testing.assert_array_equal(ember.dequantize(e).numpy(), torch.dequantize(t).numpy())
        assert e.dequantize().dtype == ember.float32
    f = ember.ones(2)
    assert f.dequantize().data_ptr() == f.data_ptr()


def test_pytorch_2_names_for_plain_values_match_torch_2_6():
    # Values as PyTorch 2.6 gives them (checked in a Debian 13 root; 1.13 lacks these names).
    assert (ember.sym_int(3.7), ember.sym_int(-3.7), ember.sym_int(True)) == (3, -3, 1)
    assert ember.sym_float(3) == 3.0 and ember.sym_not(True) is False
    assert ember.sym_sqrt(4) == 2.0 and isinstance(ember.sym_sqrt(4), float)
    assert ember.sym_max(2, 5.0) == 5.0 and isinstance(ember.sym_max(3, 2.0), float)
    assert ember.sym_min(2, 5) == 2 and ember.sym_sum([]) == 0 and ember.sym_sum([1.5, 2]) == 3.5
    assert ember.sym_ite(True, 1, 2) == 1 and ember.sym_fresh_size(5) == 5
    assert not isinstance(3, ember.SymInt)
    ember.sym_constrain_range(3, min=0, max=5)
    ember.sym_constrain_range_for_size(0)
    with pytest.raises(RuntimeError, match=r"Invalid value range for 7 between \[0, 5\]"):
        ember.sym_constrain_range(7, min=0, max=5)
    with pytest.raises(RuntimeError, match=r"for -1 between \[0, 9223372036854775807\]"):
        ember.sym_constrain_range_for_size(-1)
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cpu")) is ember.cpu
    assert ember.get_device_module("cuda") is ember.cuda
    x = ember.empty_permuted((2, 3, 4), (0, 2, 1))
    assert tuple(x.shape) == (2, 3, 4) and x.stride() == (12, 1, 3)
    assert ember.nonzero_static(ember.tensor([0, 1, 0, 2]), size=3).tolist() == [[1], [3], [-1]]
    assert ember.tensor([[1, 0], [1, 1]]).nonzero_static(size=2, fill_value=-5).tolist() == \
        [[0, 0], [1, 0]]
    assert ember.randn(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert ember.cond(ember.tensor(True), lambda v: v + 1, lambda v: v - 1,
                      (ember.ones(2),)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="bool or single-element tensor"):
        ember.cond(ember.tensor([True, False]), lambda: 1, lambda: 2, ())
    p, value = ember.zeros(2), ember.ones(2)
    loaded = p.module_load(value)
    assert loaded.tolist() == [1.0, 1.0] and p.tolist() == [1.0, 1.0] and loaded is not p
    assert p.module_load(value, assign=True).data_ptr() == value.data_ptr()
    assert (p.is_xla, p.is_maia, p.is_mtia) == (False, False, False)
    with pytest.raises(RuntimeError, match="support for mtia devices"):
        p.mtia()
