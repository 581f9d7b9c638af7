"""Wrong behaviour found by running public programs and PyTorch's OpInfo suite against ember (the
conformance issue's list), each checked against PyTorch 1.13 so that it stays fixed."""
import itertools
import math

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


def test_leaky_relu_in_place_backward():
    """nn.LeakyReLU(0.2, inplace=True) inside a model: its backward needed the input it had
    overwritten ("modified by an inplace operation")."""
    torch.manual_seed(0)
    x = torch.randn(4, 5)
    w = torch.randn(5, 5, requires_grad=True)
    tl = torch.nn.LeakyReLU(0.2, inplace=True)(x @ w).sum()
    tl.backward()
    ew = E(w).requires_grad_()
    el = nn.LeakyReLU(0.2, inplace=True)(E(x) @ ew).sum()
    el.backward()
    np.testing.assert_allclose(ew.grad.numpy(), w.grad.numpy(), rtol=1e-6)
    for name in ("relu", "elu", "hardtanh", "silu", "celu", "selu", "relu6"):
        x = torch.randn(6, dtype=torch.float64)
        tx = x.clone().requires_grad_()
        getattr(torch.nn.functional, name)(tx * 2, inplace=True).sum().backward()
        ex = E(x).requires_grad_()
        getattr(F, name)(ex * 2, inplace=True).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12, err_msg=name)


def test_in_place_methods_keep_autograd_and_dtype_rules():
    x = ember.tensor([0.5, -1.0], requires_grad=True)
    y = x * 1
    y.sin_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, -1.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        ember.tensor([1, 2]).sqrt_()


def test_random_sampler_draws_lazily():
    """makemore's and minGPT's infinite loaders: RandomSampler(replacement=True,
    num_samples=int(1e10)) must not draw 10^10 indices up front."""
    sampler = ember.utils.data.RandomSampler(range(10), replacement=True,
                                             num_samples=int(1e10))
    first = list(itertools.islice(iter(sampler), 100))
    assert len(first) == 100 and all(0 <= i < 10 for i in first)
    assert len(sampler) == int(1e10)
    # Without replacement: a whole permutation, then part of the next.
    s = list(ember.utils.data.RandomSampler(range(7), num_samples=9))
    assert len(s) == 9 and sorted(s[:7]) == list(range(7)) and len(set(s[7:])) == 2


def test_legacy_type_classes_and_grad_keywords():
    x = ember.arange(3)
    assert x.type(ember.FloatTensor).dtype == ember.float32
    assert x.type(ember.DoubleTensor).dtype == ember.float64
    assert x.type("torch.LongTensor").dtype == ember.int64
    w = ember.ones(2, requires_grad=True)
    (g,) = ember.autograd.grad((w * 3).sum(), w, only_inputs=True)
    assert g.tolist() == [3.0, 3.0]
    u = ember.ones(2, requires_grad=True)
    g = ember.autograd.grad((w * 2).sum(), [w, u], materialize_grads=True)
    assert g[1].tolist() == [0.0, 0.0]


def test_conv_padding_same():
    x = torch.randn(1, 2, 7, 6, dtype=torch.float64)
    w = torch.randn(3, 2, 4, 3, dtype=torch.float64)  # an even kernel: asymmetric padding
    for dilation in (1, 2):
        np.testing.assert_allclose(
            F.conv2d(E(x), E(w), padding="same", dilation=dilation).numpy(),
            torch.nn.functional.conv2d(x, w, padding="same", dilation=dilation).numpy(),
            rtol=1e-12)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(E(x), E(w), stride=2, padding="same")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")
    x1, w1 = torch.randn(1, 2, 9, dtype=torch.float64), torch.randn(3, 2, 4, dtype=torch.float64)
    np.testing.assert_allclose(F.conv1d(E(x1), E(w1), padding="same").numpy(),
                               torch.nn.functional.conv1d(x1, w1, padding="same").numpy(),
                               rtol=1e-12)


def test_values_pytorch_gives():
    assert ember.addcmul(ember.tensor([1, 2]), ember.tensor([3, 5]),
                         ember.tensor([7, 11])).tolist() == [22, 57]
    assert ember.addcmul(ember.tensor([1, 2]), ember.tensor([3, 5]),
                         ember.tensor([7, 11])).dtype == ember.int64
    assert ember.linspace(-3, 1, steps=1).tolist() == [-3.0]
    assert F.relu6(ember.tensor([-2, 3, 9])).dtype == ember.int64
    assert F.hardtanh(ember.tensor([-2, 0, 9])).tolist() == [-1, 0, 1]
    i32 = ember.ones(2, 3, dtype=ember.int32)
    assert ember.einsum("ij->i", i32).dtype == ember.int64  # a sum, as PyTorch's
    assert ember.einsum("ij,kj->ik", i32, i32).dtype == ember.int32  # a product keeps int32
    assert ember.einsum("ij,kl->i", i32, i32).tolist() == [18, 18]
    a, b = torch.randn(3, 1, 4, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    np.testing.assert_allclose(F.cosine_similarity(E(a), E(b), dim=-1).numpy(),
                               torch.nn.functional.cosine_similarity(a, b, dim=-1).numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("mode,dims", [("nearest", 1), ("nearest", 2), ("nearest", 3),
                                       ("nearest-exact", 2), ("linear", 1), ("bilinear", 2),
                                       ("bicubic", 2), ("trilinear", 3), ("area", 2), ("area", 1)])
@pytest.mark.parametrize("how", ["scale", "size", "scale_recompute", "align"])
def test_interpolate_matches_pytorch(mode, dims, how):
    """Coordinates map by 1 / scale_factor when one is given (interpolate(scale_factor=1.7)
    mapped them by the ratio of sizes), in every mode and rank."""
    torch.manual_seed(0)
    x = torch.randn((2, 3) + (5, 4, 3)[:dims], dtype=torch.float64)
    kw = {}
    if how == "align":
        if mode not in ("linear", "bilinear", "bicubic", "trilinear"):
            return
        kw = dict(size=(7, 9, 4)[:dims], align_corners=True)
    elif how == "size":
        kw = dict(size=(7, 3, 5)[:dims])
    else:
        kw = dict(scale_factor=1.7, recompute_scale_factor=how == "scale_recompute")
    t = torch.nn.functional.interpolate(x, mode=mode, **kw)
    e = F.interpolate(E(x), mode=mode, **kw)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    if how == "size":
        tx, ex = x.clone().requires_grad_(), E(x).requires_grad_()
        torch.nn.functional.interpolate(tx, mode=mode, **kw).pow(2).sum().backward()
        F.interpolate(ex, mode=mode, **kw).pow(2).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def _both_ways(fn_t, fn_e, *arrays, rtol=1e-10, atol=1e-12, grad=True):
    """fn_t on torch tensors and fn_e on ember copies: equal values and (for float64 inputs that
    are leaves) equal gradients of the sum of squares."""
    ts = [torch.from_numpy(a).requires_grad_(grad and a.dtype == np.float64) for a in arrays]
    es = [ember.from_numpy(a.copy()).requires_grad_(grad and a.dtype == np.float64)
          for a in arrays]
    t, e = fn_t(*ts), fn_e(*es)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    if grad and t.requires_grad:
        t.pow(2).sum().backward()
        e.pow(2).sum().backward()
        for a, b in zip(es, ts):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


def test_bitwise_ops_on_integers():
    a, b = np.array([5, -3, 12, 7], dtype=np.int32), np.array([3, 1, 10, 2], dtype=np.int32)
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    assert (ea & eb).tolist() == (a & b).tolist()
    assert (ea | eb).tolist() == (a | b).tolist()
    assert (ea ^ eb).tolist() == (a ^ b).tolist()
    assert (~ea).tolist() == (~a).tolist()
    assert (ea << eb).tolist() == torch.bitwise_left_shift(torch.from_numpy(a),
                                                           torch.from_numpy(b)).tolist()
    assert (ea >> eb).tolist() == (a >> b).tolist()
    assert (3 & ea).tolist() == (3 & a).tolist() and (ea | 8).dtype == ember.int32
    with pytest.raises(RuntimeError):
        ember.ones(2) & ember.ones(2)


def test_clamp_with_tensor_bounds():
    x = np.linspace(-2, 2, 9)
    lo, hi = np.full(9, -0.5), np.linspace(0, 1, 9)
    _both_ways(lambda x, lo, hi: torch.clamp(x, lo, hi), lambda x, lo, hi: ember.clamp(x, lo, hi),
               x, lo, hi)
    _both_ways(lambda x, lo: torch.clamp_min(x, lo), lambda x, lo: ember.clamp_min(x, lo), x, lo)


def test_var_std_correction():
    x = np.random.default_rng(0).standard_normal((4, 5))
    for c in (0, 1, 2, 3):  # PyTorch 1.13 takes an int (2.x a float too)
        _both_ways(lambda t: torch.var(t, 1, correction=c), lambda t: ember.var(t, 1, correction=c),
                   x)
        _both_ways(lambda t: torch.std(t, (0, 1), correction=c),
                   lambda t: ember.std(t, (0, 1), correction=c), x)


def test_three_d_layers_match_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6, 7))
    w = rng.standard_normal((4, 3, 2, 3, 2))
    _both_ways(lambda x, w: torch.nn.functional.conv3d(x, w, stride=(1, 2, 1), padding=1),
               lambda x, w: F.conv3d(x, w, stride=(1, 2, 1), padding=1), x, w)
    wt = rng.standard_normal((3, 2, 2, 2, 3))
    _both_ways(lambda x, w: torch.nn.functional.conv_transpose3d(x, w, stride=2),
               lambda x, w: F.conv_transpose3d(x, w, stride=2), x, wt)
    _both_ways(lambda x: torch.nn.functional.max_pool3d(x, 2, ceil_mode=True),
               lambda x: F.max_pool3d(x, 2, ceil_mode=True), x)
    _both_ways(lambda x: torch.nn.functional.avg_pool3d(x, 3, 2, 1),
               lambda x: F.avg_pool3d(x, 3, 2, 1), x)
    _both_ways(lambda x: torch.nn.functional.adaptive_avg_pool3d(x, (2, 3, None)),
               lambda x: F.adaptive_avg_pool3d(x, (2, 3, None)), x)
    _both_ways(lambda x: torch.nn.functional.adaptive_max_pool3d(x, (2, 4, 3)),
               lambda x: F.adaptive_max_pool3d(x, (2, 4, 3)), x)
    t_idx = torch.nn.functional.adaptive_max_pool3d(torch.from_numpy(x), 3, True)[1]
    e_idx = F.adaptive_max_pool3d(E(torch.from_numpy(x)), 3, True)[1]
    assert e_idx.tolist() == t_idx.tolist()
    even = torch.from_numpy(x[:, :, :4, :, :6].copy())  # unpooling restores these sizes
    v, i = F.max_pool3d(E(even), 2, return_indices=True)
    np.testing.assert_array_equal(
        F.max_unpool3d(v, i, 2).numpy(),
        torch.nn.functional.max_unpool3d(*torch.nn.functional.max_pool3d(
            even, 2, return_indices=True), 2).numpy())
    bn_t, bn_e = torch.nn.BatchNorm3d(3).double(), nn.BatchNorm3d(3).double()
    np.testing.assert_allclose(bn_e(E(torch.from_numpy(x))).detach().numpy(),
                               bn_t(torch.from_numpy(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(bn_e.running_var.numpy(), bn_t.running_var.numpy(), rtol=1e-12)


def test_sort_ties_and_median_follow_pytorch():
    """Equal values come out in PyTorch's order (stable sort keeps their positions; median and
    kthvalue pick the index PyTorch picks)."""
    x = np.array([3, 1, 3, 2, 1, 3, 2, 2, 1, 3], dtype=np.float32)
    t, e = torch.from_numpy(x), ember.from_numpy(x)
    for desc in (False, True):
        assert e.sort(descending=desc, stable=True)[1].tolist() == \
            t.sort(descending=desc, stable=True)[1].tolist()
    assert e.median(0)[1].item() == t.median(0)[1].item()
    assert e.kthvalue(4)[1].item() == t.kthvalue(4)[1].item()
    m = np.array([[1.0, np.nan, 2.0, 2.0], [3.0, 1.0, 1.0, 4.0]])
    assert ember.nanmedian(E(torch.from_numpy(m)), 1)[0].tolist() == \
        torch.nanmedian(torch.from_numpy(m), 1)[0].tolist()
    assert ember.mode(E(torch.from_numpy(m)), 1)[0].tolist()[1] == 1.0
    q = np.random.default_rng(1).standard_normal((3, 7))
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        _both_ways(lambda t: torch.quantile(t, 0.3, dim=1, interpolation=interp),
                   lambda t: ember.quantile(t, 0.3, dim=1, interpolation=interp), q)


def test_embedding_bag_matches_pytorch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((10, 3))
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    for mode in ("sum", "mean", "max"):
        for offsets in ([0, 4], [0, 0, 3], [0, 3, 8]):
            off = torch.tensor(offsets)
            _both_ways(lambda w: torch.nn.functional.embedding_bag(idx, w, off, mode=mode,
                                                                   padding_idx=4),
                       lambda w: F.embedding_bag(ember.tensor(idx.tolist()), w,
                                                 ember.tensor(offsets), mode=mode, padding_idx=4),
                       w)
    i2 = torch.tensor([[1, 2, 3], [4, 4, 0]])
    psw = rng.standard_normal((2, 3))
    _both_ways(lambda w, p: torch.nn.functional.embedding_bag(i2, w, mode="sum",
                                                              per_sample_weights=p),
               lambda w, p: F.embedding_bag(ember.tensor(i2.tolist()), w, mode="sum",
                                            per_sample_weights=p), w, psw)
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    assert tuple(bag(ember.tensor([[1, 2], [3, 4]])).shape) == (2, 3)


def test_margin_losses_match_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5))
    y = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [-1, 2, 2, 2, 2], [0, 1, 2, 3, 4]])
    for red in ("none", "mean", "sum"):
        _both_ways(lambda x: torch.nn.functional.multilabel_margin_loss(x, y, reduction=red),
                   lambda x: F.multilabel_margin_loss(x, ember.tensor(y.tolist()), reduction=red),
                   x)
    _both_ways(lambda x: torch.nn.functional.multi_margin_loss(x, torch.tensor([2]), p=2),
               lambda x: F.multi_margin_loss(x, ember.tensor([2]), p=2), x[0])
    assert isinstance(nn.MultiLabelMarginLoss()(ember.from_numpy(x), ember.tensor(y.tolist())),
                      ember.Tensor)


def test_feature_alpha_dropout_keeps_selu_statistics():
    ember.manual_seed(0)
    x = ember.randn(4000, 8, 3)
    out = F.feature_alpha_dropout(x, 0.3, training=True)
    # Whole channels dropped: each (n, c) slice is either all kept (an affine map of x) or constant.
    flat = out.reshape(4000 * 8, 3)
    constant = (flat.amax(1) - flat.amin(1)).abs() < 1e-6
    assert 0.25 < constant.float().mean().item() < 0.35
    assert abs(out.mean().item()) < 0.05 and abs(out.std().item() - 1) < 0.05
    assert F.feature_alpha_dropout(x, 0.3, training=False) is x
    assert isinstance(nn.FeatureAlphaDropout(0.2)(x), ember.Tensor)


def test_max_pool2d_module_returns_indices():
    x = torch.randn(1, 2, 6, 6)
    tv, ti = torch.nn.MaxPool2d(2, return_indices=True)(x)
    pool = nn.MaxPool2d(2, return_indices=True)
    ev, ei = pool(E(x))
    assert ei.tolist() == ti.tolist()
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    assert isinstance(nn.MaxPool2d(2)(E(x)), ember.Tensor)
    # PyTorch's positional order: (kernel_size, stride, padding, dilation, return_indices, ceil).
    assert nn.MaxPool2d(3, 2, 0, 1, False, True)(E(x)).shape[-1] == \
        torch.nn.MaxPool2d(3, 2, 0, 1, False, True)(x).shape[-1]
    unpool = nn.MaxUnpool2d(2)
    np.testing.assert_array_equal(unpool(ev, ei).numpy(),
                                  torch.nn.MaxUnpool2d(2)(tv, ti).numpy())


def test_more_modules_exist_and_match():
    x = torch.randn(2, 4, 3, 3, 3)
    for name, args in (("ConstantPad3d", (1, 2.0)), ("ReflectionPad3d", (1,)),
                       ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)),
                       ("ChannelShuffle", (2,)), ("Hardshrink", (0.3,)), ("Softshrink", ())):
        t = getattr(torch.nn, name)(*args)(x)
        e = getattr(nn, name)(*args)(E(x))
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, err_msg=name)
    a, b = torch.randn(3, 5), torch.randn(3, 5)
    np.testing.assert_allclose(nn.PairwiseDistance()(E(a), E(b)).numpy(),
                               torch.nn.PairwiseDistance()(a, b).numpy(), rtol=1e-5)
    np.testing.assert_allclose(nn.CosineSimilarity()(E(a), E(b)).numpy(),
                               torch.nn.CosineSimilarity()(a, b).numpy(), rtol=1e-5)
    lazy = nn.LazyLinear(4)
    assert tuple(lazy(ember.ones(2, 7)).shape) == (2, 4) and lazy.in_features == 7
    img = torch.randn(1, 3, 6, 6)
    cols = torch.nn.Unfold(3, padding=1)(img)
    np.testing.assert_allclose(nn.Unfold(3, padding=1)(E(img)).numpy(), cols.numpy(), rtol=1e-6)
    np.testing.assert_allclose(nn.Fold((6, 6), 3, padding=1)(E(cols)).numpy(),
                               torch.nn.Fold((6, 6), 3, padding=1)(cols).numpy(), rtol=1e-5)


def test_indexing_with_lists_as_pytorch():
    x = torch.arange(5 * 5 * 5).reshape(5, 5, 5)
    e = E(x)
    for idx in ([1, 2], [slice(0, 3), 1], [[0, 2, 3], [1, 3, 3], [0, 0, 2]],
                [slice(None), [0, 3], slice(None)], [[0, 3]], [[0, 3], Ellipsis],
                [slice(None), slice(None), [0, 3]]):
        assert e[idx].tolist() == x[idx].tolist(), idx


def test_matrix_transpose_properties():
    s = ember.tensor(2.0)
    assert s.mT.item() == 2.0 and s.mH.item() == 2.0
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        ember.ones(3).mT
    assert tuple(ember.ones(2, 3, 4).mT.shape) == (2, 4, 3)
    assert tuple(ember.adjoint(ember.ones(2, 3)).shape) == (3, 2)


def test_pinv_and_rank_with_tensor_tolerances():
    a = torch.randn(3, 4, 4, dtype=torch.float64)
    a[0, :, 0] = 0
    rtol = torch.tensor([0.1, 1e-8, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(ember.linalg.pinv(E(a), rtol=E(rtol)).numpy(),
                               torch.linalg.pinv(a, rtol=rtol).numpy(), rtol=1e-8, atol=1e-10)
    assert ember.linalg.matrix_rank(E(a), atol=E(torch.tensor(0.5, dtype=torch.float64))).tolist() \
        == torch.linalg.matrix_rank(a, atol=torch.tensor(0.5, dtype=torch.float64)).tolist()


def test_gather_with_empty_index_of_any_dtype():
    out = ember.gather(ember.ones(3, 3), 0, ember.tensor([], dtype=ember.uint8))
    assert tuple(out.shape) == (0,)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 4))
    base[0, 1] = 0.0
    src = rng.standard_normal((3, 5))
    src[1, 2] = 0.0  # one zero factor (prod's special case)
    src[2, 0] = src[2, 3] = 0.5  # a tie (amax/amin share the gradient)
    base[2, 1] = 0.5
    index = torch.tensor([[0, 1, 0, 2, 0], [1, 1, 3, 3, 3], [1, 0, 2, 1, 2]])
    _both_ways(lambda b, s: b.scatter_reduce(1, index, s, reduce, include_self=include_self),
               lambda b, s: b.scatter_reduce(1, ember.tensor(index.tolist()), s, reduce,
                                             include_self=include_self), base, src)


def test_gradient_matches_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5, 3))
    for kw in (dict(), dict(spacing=2.0), dict(dim=1, edge_order=2),
               dict(spacing=[2.0, 1.5], dim=(0, 2), edge_order=2)):
        t = torch.gradient(torch.from_numpy(x), **kw)
        e = ember.gradient(ember.from_numpy(x.copy()), **kw)
        for a, b in zip(e, t):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=str(kw))
    coords = [torch.tensor([0.0, 1.0, 3.0, 3.5]), torch.tensor([1.0, 1.1, 2.0, 4.0, 4.5])]
    for order in (1, 2):
        t = torch.gradient(torch.from_numpy(x[:, :, 0]), spacing=coords, edge_order=order)
        e = ember.gradient(ember.from_numpy(x[:, :, 0].copy()),
                           spacing=[ember.tensor(c.tolist()) for c in coords], edge_order=order)
        for a, b in zip(e, t):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert ember.gradient(ember.tensor([1, 4, 9, 16]))[0].tolist() == [3.0, 4.0, 6.0, 7.0]


def test_index_copy_and_index_reduce():
    rng = np.random.default_rng(0)
    x, src = rng.standard_normal((5, 3)), rng.standard_normal((3, 3))
    idx = torch.tensor([4, 0, 2])
    _both_ways(lambda x, s: x.index_copy(0, idx, s),
               lambda x, s: x.index_copy(0, ember.tensor(idx.tolist()), s), x, src)
    dup = torch.tensor([1, 1, 3])
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            _both_ways(lambda x, s: x.index_reduce(0, dup, s, reduce, include_self=include_self),
                       lambda x, s: x.index_reduce(0, ember.tensor(dup.tolist()), s, reduce,
                                                   include_self=include_self), x, src)


def test_native_norm_entry_points():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5))
    t = torch.native_layer_norm(torch.from_numpy(x), (5,), None, None, 1e-5)
    e = ember.native_layer_norm(ember.from_numpy(x.copy()), (5,), None, None, 1e-5)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    rm_e, rv_e = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    t = torch.native_batch_norm(torch.from_numpy(x), None, None, rm_t, rv_t, True, 0.1, 1e-5)
    e = ember.native_batch_norm(ember.from_numpy(x.copy()), None, None, rm_e, rv_e, True, 0.1,
                                1e-5)
    for a, b in zip(list(e) + [rm_e, rv_e], list(t) + [rm_t, rv_t]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_matches_pytorch(reduction):
    torch.manual_seed(0)
    T, N, C = 12, 3, 5
    logits = torch.randn(T, N, C, dtype=torch.float64)
    targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 3, 0]])
    in_len, tg_len = torch.tensor([12, 9, 5]), torch.tensor([4, 2, 3])
    tl = logits.clone().requires_grad_()
    t = torch.nn.functional.ctc_loss(tl.log_softmax(2), targets, in_len, tg_len,
                                     reduction=reduction)
    el = ember.from_numpy(logits.numpy().copy()).requires_grad_()
    e = F.ctc_loss(el.log_softmax(2), ember.tensor(targets.tolist()),
                   ember.tensor(in_len.tolist()), ember.tensor(tg_len.tolist()),
                   reduction=reduction)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    t.sum().backward()
    e.sum().backward()
    np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=1e-8, atol=1e-12)
    # Concatenated targets, and a target too long for its input (inf, or 0 with zero_infinity).
    flat = [1, 2, 2, 3, 4, 1, 3, 3, 3]
    lp = ember.from_numpy(logits.log_softmax(2).numpy().copy())
    np.testing.assert_allclose(
        F.ctc_loss(lp, ember.tensor(flat), (12, 9, 5), (4, 2, 3), reduction=reduction).numpy(),
        t.detach().numpy(), rtol=1e-10)
    short = F.ctc_loss(lp, ember.tensor(targets.tolist()), (12, 9, 2), (4, 2, 3),
                       reduction="none", zero_infinity=True)
    assert short.tolist()[2] == 0.0
    assert isinstance(nn.CTCLoss()(lp, ember.tensor(flat), (12, 9, 5), (4, 2, 3)), ember.Tensor)


def test_adaptive_log_softmax_and_lrn_modules():
    torch.manual_seed(0)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0).double()
    e = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0).double()
    e.load_state_dict({k: E(v) for k, v in t.state_dict().items()})
    x = torch.randn(6, 8, dtype=torch.float64)
    y = torch.tensor([0, 5, 19, 3, 12, 9])
    to, eo = t(x, y), e(E(x), ember.tensor(y.tolist()))
    np.testing.assert_allclose(eo.output.detach().numpy(), to.output.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(eo.loss.item(), to.loss.item(), rtol=1e-10)
    np.testing.assert_allclose(e.log_prob(E(x)).detach().numpy(),
                               t.log_prob(x).detach().numpy(), rtol=1e-10)
    assert e.predict(E(x)).tolist() == t.predict(x).tolist()
    img = torch.randn(2, 7, 3, 3)
    for size in (3, 4, 5):
        np.testing.assert_allclose(nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)(E(img)).numpy(),
                                   torch.nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)(img).numpy(),
                                   rtol=1e-5, err_msg=str(size))
    lazy = nn.LazyBatchNorm2d()
    out = lazy(E(img))
    assert lazy.num_features == 7 and tuple(lazy.running_mean.shape) == (7,)
    np.testing.assert_allclose(out.detach().numpy(),
                               torch.nn.BatchNorm2d(7)(img).detach().numpy(), rtol=1e-4, atol=1e-5)
    inst = nn.LazyInstanceNorm1d()
    assert tuple(inst(ember.ones(2, 3, 4)).shape) == (2, 3, 4) and inst.num_features == 3


def test_aten_signature_aliases_and_copies():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    lx = torch.from_numpy(x).log_softmax(1)
    for r in (0, 1, 2):
        np.testing.assert_allclose(ember.kl_div(E(lx), E(torch.from_numpy(y).softmax(1)), r)
                                   .numpy(),
                                   torch.kl_div(lx, torch.from_numpy(y).softmax(1), r).numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            ember.binary_cross_entropy_with_logits(E(torch.from_numpy(x)),
                                                   E(torch.from_numpy(y).sigmoid()),
                                                   reduction=r).numpy(),
            torch.binary_cross_entropy_with_logits(torch.from_numpy(x),
                                                   torch.from_numpy(y).sigmoid(),
                                                   reduction=r).numpy(), rtol=1e-12)
    e = ember.from_numpy(x.copy())
    c = ember.transpose_copy(e, 0, 1)
    c.fill_(0)
    assert e.abs().sum().item() > 0 and tuple(c.shape) == (4, 3)
    assert [tuple(p.shape) for p in ember.split_copy(e, 2, 1)] == [(3, 2), (3, 2)]
    assert ember.alias_copy(e).data_ptr() != e.data_ptr()


def test_conv3d_same_padding_and_lazy_convs():
    x = torch.randn(1, 2, 5, 6, 4, dtype=torch.float64)
    w = torch.randn(3, 2, 2, 3, 4, dtype=torch.float64)  # even spans: asymmetric padding
    np.testing.assert_allclose(F.conv3d(E(x), E(w), padding="same").numpy(),
                               torch.nn.functional.conv3d(x, w, padding="same").numpy(),
                               rtol=1e-10)
    assert tuple(nn.Conv3d(2, 3, 3, padding="same")(E(x).float()).shape) == (1, 3, 5, 6, 4)
    for cls, n in (("LazyConv1d", 1), ("LazyConv2d", 2), ("LazyConv3d", 3),
                   ("LazyConvTranspose1d", 1), ("LazyConvTranspose2d", 2),
                   ("LazyConvTranspose3d", 3)):
        m = getattr(nn, cls)(4, 3)
        out = m(ember.ones((2, 5) + (6,) * n))
        assert out.shape[1] == 4 and m.in_channels == 5, cls


def test_sequential_runs_python_hooks_and_overrides():
    seen = []
    lin = nn.Linear(3, 2)
    model = nn.Sequential(lin, nn.ReLU())
    lin.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    model(ember.ones(4, 3))
    assert seen == [(4, 2)]

    class Twice(nn.Module):
        def forward(self, x):
            return x * 2

    assert nn.Sequential(Twice(), Twice())(ember.ones(2)).tolist() == [4.0, 4.0]


def test_reflected_bitwise_and_bool_clamps():
    a, b = ember.tensor([True, False, True]), ember.tensor([True, True, False])
    assert a.__rand__(b).tolist() == [True, False, False]
    assert a.__ror__(b).tolist() == [True, True, True]
    assert a.__rxor__(b).tolist() == [False, True, True]
    assert ember.clamp_min(a, b).tolist() == [True, True, True]
    assert ember.clamp_max(a, b).tolist() == [True, False, False]
    lo = ember.tensor(0.5, dtype=ember.float64, requires_grad=True)
    x = ember.tensor([0.2, 0.9], dtype=ember.float64, requires_grad=True)
    ember.clamp_min(x, lo).sum().backward()
    assert lo.grad.item() == 1.0 and x.grad.tolist() == [0.0, 1.0]


def test_integer_outputs_carry_no_gradient_and_none_parameters_replicate():
    """x.int() of a leaf that requires grad came back requiring grad (PyTorch: only floating
    tensors carry gradients), and replicate/clone of a module with register_parameter('bias', None)
    crashed."""
    x = ember.randn(3, requires_grad=True)
    assert not x.int().requires_grad and x.int().grad_fn is None
    values, indices = (x * 2).max(0)
    assert values.requires_grad and not indices.requires_grad
    values.backward()
    assert x.grad.tolist().count(2.0) == 1

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(ember.ones(3))
            self.register_parameter("bias", None)
            self.register_buffer("scale", None)

        def forward(self, x):
            return x * self.weight

    m = Affine()
    (copy,) = nn.parallel.replicate(m, [ember.device("cpu")])
    assert copy.bias is None and copy.scale is None
    np.testing.assert_array_equal(copy(ember.ones(3)).detach().numpy(), np.ones(3))
    lin = nn.Linear(3, 2, bias=False)
    (rl,) = nn.parallel.replicate(lin, [ember.device("cpu")])
    assert rl.bias is None
    assert rl(ember.ones(1, 3)).shape == (1, 2)


@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (3, 12, 10)])
def test_svd_and_pca_lowrank_recover_a_low_rank_matrix(shape):
    """svd_lowrank/pca_lowrank (Halko et al.'s randomized range finder): a rank-3 matrix comes
    back whole, its singular values those of the full SVD."""
    ember.manual_seed(0)
    *batch, m, n = shape
    a = ember.randn(*batch, m, 3, dtype=ember.float64) @ ember.randn(*batch, 3, n,
                                                                       dtype=ember.float64)
    u, s, v = ember.svd_lowrank(a, q=4)
    assert u.shape == (*batch, m, 4) and s.shape == (*batch, 4) and v.shape == (*batch, n, 4)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ v.transpose(-2, -1)).numpy(), a.numpy(),
                               atol=1e-9)
    np.testing.assert_allclose(s[..., :3].numpy(), ember.linalg.svdvals(a)[..., :3].numpy(),
                               rtol=1e-9)
    u, s, v = ember.pca_lowrank(a, q=3)
    centred = a - a.mean(-2, keepdim=True)
    np.testing.assert_allclose(s.numpy(), ember.linalg.svdvals(centred)[..., :3].numpy(),
                               rtol=1e-8)
    with pytest.raises(ValueError, match="not greater than"):
        ember.pca_lowrank(a, q=min(m, n) + 1)


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_matches_pytorch_given_its_samples(dims):
    """fractional_max_pool2d/3d: PyTorch's windows (its interval formula, the 2-d kernel taking
    the width's sample first), values, indices and gradients, given the same random samples."""
    torch.manual_seed(0)
    shape = (2, 3, 9, 11) if dims == 2 else (2, 3, 7, 8, 9)
    x = torch.randn(*shape, dtype=torch.float64)
    samples = torch.rand(2, 3, dims, dtype=torch.float64)
    t_fn = getattr(torch.nn.functional, f"fractional_max_pool{dims}d")
    e_fn = getattr(F, f"fractional_max_pool{dims}d")
    for kwargs in (dict(output_size=4), dict(output_ratio=0.5), dict(output_size=1)):
        tx, ex = x.clone().requires_grad_(), E(x).requires_grad_()
        t, ti = t_fn(tx, 3 if dims == 2 else (3, 2, 2), return_indices=True,
                     _random_samples=samples, **kwargs)
        e, ei = e_fn(ex, 3 if dims == 2 else (3, 2, 2), return_indices=True,
                     _random_samples=E(samples), **kwargs)
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        g = torch.randn_like(t)
        t.backward(g)
        e.backward(E(g))
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    module = getattr(nn, f"FractionalMaxPool{dims}d")(2, output_ratio=0.5)
    assert module(ember.randn(*shape)).shape[-dims:] == tuple(s // 2 for s in shape[-dims:])
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        getattr(nn, f"FractionalMaxPool{dims}d")(2, output_ratio=1.5)


def test_segment_reduce_matches_pytorch():
    """segment_reduce over lengths and offsets, each reduction, empty runs with and without an
    initial value, along a later axis with per-row lengths; gradients as PyTorch's."""
    torch.manual_seed(0)
    data = torch.randn(4, 6, dtype=torch.float64)
    # (No ties: PyTorch divides a tied max's gradient among the ties only where it is positive.)
    cases = [(dict(lengths=torch.tensor([1, 0, 2, 1])), 0),
             (dict(offsets=torch.tensor([0, 1, 1, 3, 4])), 0),
             (dict(lengths=torch.tensor([[1, 0, 5], [2, 2, 2], [0, 0, 6], [3, 3, 0]])), 1)]
    for (kwargs, axis), reduce, initial in itertools.product(
            cases, ["max", "mean", "min", "sum", "prod"], [None, 2.0]):
        td = data.clone().requires_grad_()
        t = torch.segment_reduce(td, reduce, axis=axis, initial=initial, **kwargs)
        ed = E(data).requires_grad_()
        e = ember.segment_reduce(ed, reduce, axis=axis, initial=initial,
                                 **{k: E(v) for k, v in kwargs.items()})
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        g = torch.randn_like(t)
        t.backward(g.masked_fill(~torch.isfinite(t), 0))
        e.backward(E(g.masked_fill(~torch.isfinite(t), 0)))
        np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="sum to"):
        ember.segment_reduce(E(data), "sum", lengths=ember.tensor([1, 1]))


def test_torch_ops_namespace_resolves_aten_operators():
    """torch.ops.aten.<op>.<overload> (what traced graphs and OpInfo's slice entry call)."""
    x = ember.arange(10.0)
    t = torch.arange(10.0)
    np.testing.assert_array_equal(ember.ops.aten.slice.Tensor(x, 0, 2, 8, 3).numpy(),
                                  torch.ops.aten.slice.Tensor(t, 0, 2, 8, 3).numpy())
    np.testing.assert_array_equal(ember.ops.aten.add.Tensor(x, x).numpy(), (t + t).numpy())
    np.testing.assert_array_equal(ember.ops.aten.relu.default(x - 5).numpy(),
                                  torch.ops.aten.relu.default(t - 5).numpy())
    assert "aten.slice" in repr(ember.ops.aten.slice)
    with pytest.raises(AttributeError, match="no attribute 'not_an_op'"):
        ember.ops.aten.not_an_op


def test_resize_set_and_in_place_views_match_pytorch():
    """resize_ (growing the storage every view shares), resize_as_, set_, and the in-place views
    squeeze_/unsqueeze_/t_/transpose_/swapaxes_/swapdims_/as_strided_ with their gradients."""
    for lib in (torch, ember):
        x = lib.arange(6.0)
        view = x[:2]
        assert x.resize_(2, 2) is x and tuple(x.shape) == (2, 2)
        assert x.tolist() == [[0, 1], [2, 3]]  # (numpy() would pin torch's storage's size)
        x.resize_(3, 4)  # grows: the first 6 values stay
        assert x.reshape(-1)[:6].tolist() == list(range(6))
        view.fill_(7)
        assert x[0, 0].item() == 7  # the view shares the grown storage
        y = lib.zeros(5)
        assert tuple(y.resize_as_(lib.zeros(1, 2)).shape) == (1, 2)
        s = lib.ones(3)
        z = lib.zeros(2, 2)
        z.set_(s)
        s[1] = 5
        assert tuple(z.shape) == (3,) and z[1].item() == 5
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.ones(2, requires_grad=True).resize_(3)
        with pytest.raises(RuntimeError, match="not resizable"):  # memory NumPy owns
            lib.from_numpy(np.zeros(3)).resize_(10)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.ones(2, requires_grad=True).unsqueeze_(0)
    torch.manual_seed(0)
    base = torch.randn(2, 1, 3, dtype=torch.float64)
    ops = [lambda t: t.squeeze_(), lambda t: t.squeeze_(1), lambda t: t.unsqueeze_(-1),
           lambda t: t.transpose_(0, 2), lambda t: t.swapaxes_(0, 1),
           lambda t: t.swapdims_(2, 0), lambda t: t.squeeze_().t_(),
           lambda t: t.as_strided_((3, 2), (1, 3))]
    for op in ops:
        tb = base.clone().requires_grad_()
        tv = tb * 2
        op(tv)
        (tv * torch.arange(tv.numel(), dtype=torch.float64).reshape(tv.shape)).sum().backward()
        eb = E(base).requires_grad_()
        ev = eb * 2
        op(ev)
        assert tuple(ev.shape) == tuple(tv.shape) and tuple(ev.stride()) == tuple(tv.stride())
        np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
        (ev * ember.arange(ev.numel(), dtype=ember.float64).reshape(ev.shape)).sum().backward()
        np.testing.assert_array_equal(eb.grad.numpy(), tb.grad.numpy())


def test_grouped_query_attention_and_kernel_choice():
    """scaled_dot_product_attention(enable_gqa=True) (PyTorch 2.5): each key/value head serves a
    group of query heads; sdpa_kernel/backends.cuda's switches choose the fused kernel or the
    math path, and refuse when neither is allowed, as PyTorch 2.6."""
    from ember.nn.attention import SDPBackend, sdpa_kernel
    torch.manual_seed(0)
    q = torch.randn(2, 6, 5, 8, dtype=torch.float64)
    k = torch.randn(2, 2, 7, 8, dtype=torch.float64)
    v = torch.randn(2, 2, 7, 4, dtype=torch.float64)
    kr, vr = k.repeat_interleave(3, -3), v.repeat_interleave(3, -3)
    mask = torch.ones(5, 7).tril().bool()
    weights = (q @ kr.transpose(-1, -2) / math.sqrt(8)).masked_fill(~mask, -math.inf)
    expected = torch.softmax(weights, -1) @ vr
    for backends in ([SDPBackend.FLASH_ATTENTION], [SDPBackend.MATH],
                     [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        with sdpa_kernel(backends):
            out = F.scaled_dot_product_attention(E(q), E(k), E(v), is_causal=True,
                                                 enable_gqa=True)
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    assert ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        assert not ember.backends.cuda.flash_sdp_enabled()
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(E(q), E(kr), E(vr))
    with pytest.raises(RuntimeError, match="must divide the number of heads"):
        F.scaled_dot_product_attention(E(q), E(k[:, :1].expand(2, 4, 7, 8)), E(v),
                                       enable_gqa=True)


def test_int16_and_int8_dtypes_match_pytorch():
    """torch.int16/short and torch.int8 (x.short(), x.char(), ShortTensor/CharTensor): promotion
    (uint8 with int8 is int16), wrapping arithmetic, reductions, matmul, iinfo, NumPy, DLPack and
    torch.save as PyTorch's."""
    for name in ("int16", "short", "int8"):
        assert isinstance(getattr(ember, name), ember.dtype)
    assert ember.short == ember.int16 and ember.int16.itemsize == 2 and ember.int8.is_signed
    assert ember.promote_types(ember.uint8, ember.int8) == ember.int16
    assert ember.promote_types(ember.int8, ember.int16) == ember.int16
    assert ember.promote_types(ember.int16, ember.float16) == ember.float16
    info = ember.iinfo(ember.int16)
    assert (info.min, info.max, info.bits) == (-32768, 32767, 16)
    t = torch.tensor([[120, -7, 3], [100, 50, -128]], dtype=torch.int16)
    e = ember.tensor(t.tolist(), dtype=ember.int16)
    for op in (lambda x: x * 300, lambda x: x + x, lambda x: x // 3, lambda x: x % 7,
               lambda x: x.sum(0), lambda x: x.sum(), lambda x: x.amax(1), lambda x: x.cumsum(1),
               lambda x: x @ x.t(), lambda x: x.char(), lambda x: x.char() * 2,
               lambda x: x.short(), lambda x: x.float() / 3, lambda x: x.abs(),
               lambda x: x.char().to(dtype=ember.uint8 if isinstance(x, ember.Tensor)
                                     else torch.uint8) + x.char(),
               lambda x: x.sort(1).values, lambda x: x.clamp(-5, 60), lambda x: x.bitwise_xor(x.t().t() >> 1)):
        got, want = op(e), op(t)
        assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2], op
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert e.numpy().dtype == np.int16 and ember.from_numpy(np.arange(3, dtype=np.int8)).dtype \
        == ember.int8
    np.testing.assert_array_equal(torch.from_dlpack(e.char()).numpy(), t.char().numpy())
    assert ember.from_dlpack(t.char()).dtype == ember.int8
    assert e.type() == "torch.ShortTensor" and e.char().type() == "torch.CharTensor"
    import io
    buf = io.BytesIO()
    torch.save({"s": t, "c": t.char()}, buf)
    buf.seek(0)
    back = ember.load(buf)
    assert back["s"].dtype == ember.int16 and back["c"].dtype == ember.int8
    np.testing.assert_array_equal(back["c"].numpy(), t.char().numpy())
    buf = io.BytesIO()
    ember.save({"s": e}, buf)
    buf.seek(0)
    assert torch.load(buf)["s"].dtype == torch.int16


def test_post_accumulate_grad_hook_gets_the_parameter_it_was_registered_on():
    """Tensor.register_post_accumulate_grad_hook (PyTorch 2.1): called with the leaf, after its
    .grad holds the new gradient; refused on a non-leaf."""
    m = nn.Linear(3, 2)
    params = list(m.parameters())
    optims = {id(p): ember.optim.SGD([p], lr=0.1) for p in params}
    seen = []

    def hook(p):
        seen.append(any(p is q for q in params))
        assert p.grad is not None
        optims[id(p)].step()
        optims[id(p)].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(hook) for p in params]
    before = [p.detach().clone() for p in params]
    m(ember.ones(4, 3)).sum().backward()
    assert seen == [True, True]
    for p, b in zip(params, before):
        assert not np.allclose(p.detach().numpy(), b.numpy())
    for h in handles:
        h.remove()
    with pytest.raises(RuntimeError, match="leaf"):
        (params[0] * 2).register_post_accumulate_grad_hook(hook)


@pytest.mark.parametrize("call", ["sum()", "mean()", "sum(0)", "mean(0)", "prod()", "prod(0)",
                                  "max()", "min()", "amax()"])
def test_reductions_name_their_nodes_as_pytorch(call):
    # x.sum() is SumBackward0 and x.sum(0) SumBackward1, as PyTorch's overloads are numbered
    # (tutorials print grad_fn); prod() is one node, not reshapes around prod(0).
    names = []
    for lib in (torch, ember):
        x = lib.tensor([[1.0, 2.0, 0.5], [3.0, 0.25, 4.0]], requires_grad=True)
        y = eval("x." + call)
        names.append(type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name())
        y.sum().backward()
        names.append(x.grad.tolist())
    assert names[0] == names[2]
    np.testing.assert_allclose(names[3], names[1], rtol=1e-6)


def test_out_follows_pytorchs_rules():
    # The result must cast into out's dtype without losing its kind; autograd does not record into
    # out; an out of another shape is resized, with PyTorch's warning unless it was empty.
    for lib in (torch, ember):
        a = lib.ones(3)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            lib.add(a, a, out=lib.zeros(3, dtype=lib.int64))
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
            lib.exp(lib.ones(3, requires_grad=True), out=lib.zeros(3))
        o = lib.zeros(3, dtype=lib.float64)
        lib.exp(a, out=o)
        assert o.dtype == lib.float64 and abs(o[0].item() - math.e) < 1e-6
        with pytest.warns(UserWarning, match="was resized"):
            lib.add(a, a, out=lib.zeros(2))
        o = lib.empty(0)
        lib.add(a, a, out=o)
        assert o.tolist() == [2.0, 2.0, 2.0]
