"""ember.Tensor from Python: factories, dtypes and devices, printing, operators, subscripts,
reductions and views, each against PyTorch 1.13 on the same data."""
import numpy as np
import pytest
import torch

import ember


def T(x):
    """ember -> torch, by value."""
    return torch.from_numpy(np.array(x.detach().cpu().numpy()))


def E(x):
    """torch -> ember, by value."""
    return ember.from_numpy(x.detach().numpy().copy())


def same(e, t, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(T(e).double().numpy(), t.double().numpy(), rtol=1e-5, atol=atol)


def test_factories_and_dtypes():
    assert ember.zeros(2, 3).shape == (2, 3)
    assert ember.zeros((2, 3)).shape == ember.Size([2, 3])
    assert ember.ones([4]).dtype is ember.float32
    assert ember.arange(5).dtype is ember.int64
    assert ember.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ember.full((2,), 7).dtype is ember.int64
    assert ember.full((2,), 7.0).dtype is ember.float32
    assert ember.tensor([1, 2.5]).dtype is ember.float32
    assert ember.tensor([True, False]).dtype is ember.bool
    assert ember.tensor([[1, 2], [3, 4]], dtype=ember.float64).dtype is ember.float64
    assert ember.tensor(3).shape == () and ember.tensor(3).item() == 3
    assert ember.tensor([]).shape == (0,) and ember.tensor([]).dtype is ember.float32
    assert ember.eye(3).tolist() == torch.eye(3).tolist()
    assert ember.linspace(0, 1, 5).tolist() == pytest.approx(torch.linspace(0, 1, 5).tolist())
    assert ember.zeros(2, dtype=ember.int32).dtype is ember.int32
    assert ember.empty(3, 4).numel() == 12
    assert ember.zeros_like(ember.ones(2, dtype=ember.int64)).dtype is ember.int64
    assert ember.randint(0, 10, (100,)).max().item() < 10
    assert ember.randint(5, (3,)).dtype is ember.int64
    assert sorted(ember.randperm(6).tolist()) == list(range(6))
    assert ember.float is ember.float32 and ember.long is ember.int64 and ember.half is ember.float16
    assert repr(ember.bfloat16) == "ember.bfloat16"


def test_seed_makes_random_numbers_repeat():
    ember.manual_seed(7)
    a = ember.randn(5)
    ember.manual_seed(7)
    assert ember.equal(a, ember.randn(5))


def test_device_objects():
    d = ember.device("cpu")
    assert d.type == "cpu" and d.index is None and str(d) == "cpu"
    assert repr(ember.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert ember.device("cuda:1") == ember.device("cuda", 1)
    assert ember.ones(1).device == ember.device("cpu") == "cpu"
    assert ember.ones(1).device.type == "cpu"
    assert not ember.ones(1).is_cuda
    with pytest.raises(RuntimeError, match="cuda:01"):
        ember.device("cuda:01")
    x = ember.ones(2, device="cpu:1")
    assert x.device == ember.device("cpu:1") and x.get_device() == 1


def test_printing_matches_pytorch():
    assert repr(ember.tensor([[1.0, 2.0], [3.0, 4.5]])) == repr(torch.tensor([[1.0, 2.0], [3.0, 4.5]]))
    assert repr(ember.arange(4)) == repr(torch.arange(4))
    assert repr(ember.tensor([True, False])) == repr(torch.tensor([True, False]))
    assert "requires_grad=True" in repr(ember.ones(2).requires_grad_())


def test_operators_against_pytorch():
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4,)).astype(np.float32)
    a, b, ta, tb = ember.from_numpy(a_np.copy()), ember.from_numpy(b_np.copy()), torch.from_numpy(a_np), torch.from_numpy(b_np)
    for f in [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
              lambda x, y: x + 2, lambda x, y: 2 - x, lambda x, y: 3 * x, lambda x, y: 1 / (x.abs() + 1),
              lambda x, y: x ** 2, lambda x, y: 2 ** x, lambda x, y: -x, lambda x, y: x @ y,
              lambda x, y: x > y, lambda x, y: x == x, lambda x, y: (x > 0) & (y > 0),
              lambda x, y: ~(x > 0), lambda x, y: x.exp().log1p(), lambda x, y: x.clamp(-0.5, 0.5),
              lambda x, y: x.relu().sqrt(), lambda x, y: x.sigmoid() + x.tanh(), lambda x, y: x.pow(3)]:
        same(f(a, b), f(ta, tb), atol=1e-5)
    assert (ember.arange(3) + 1.5).dtype is ember.float32  # int tensor + Python float: float32


def test_inplace_ops_return_self():
    x = ember.ones(3)
    y = x.add_(1)
    assert y is x and x.tolist() == [2, 2, 2]
    x += 1
    x *= 2
    x -= 1
    x /= 5
    assert x.tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert x.mul_(3).zero_() is x and x.tolist() == [0, 0, 0]
    assert x.fill_(2).add_(x, alpha=2).tolist() == [6, 6, 6]


def test_subscripts_against_pytorch():
    t = torch.arange(60).reshape(3, 4, 5)
    e = ember.arange(60).reshape(3, 4, 5)
    for idx in [0, -1, (1, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)),
                (Ellipsis, 0), (None, 0), (0, None, slice(1, 3)), (slice(None), None, Ellipsis),
                (1, Ellipsis, 3), (slice(-2, None),), (slice(0, 0),),
                torch.tensor([2, 0]), (slice(None), torch.tensor([[0, 1], [3, 3]])),
                (torch.tensor([0, 2]), torch.tensor([1, 3])), (torch.tensor([0, 2]), slice(None), torch.tensor([1, 3])),
                ([0, 1, 1],), (slice(None), [1, 2], [0, 4]), t > 30, (0, t[0] > 10)]:
            e_idx = tuple(E(i) if isinstance(i, torch.Tensor) else i for i in idx) if isinstance(idx, tuple) else (E(idx) if isinstance(idx, torch.Tensor) else idx)
            assert e[e_idx].tolist() == t[idx].tolist(), idx
    with pytest.raises(IndexError):
        e[3]
    with pytest.raises(IndexError):
        e[0, 0, 0, 0]


def test_setitem_against_pytorch():
    for idx, value in [((0,), 7), ((slice(None), 1), -1), ((Ellipsis, 2), 5.0), ((1, 2, 3), 9),
                       ((torch.tensor([0, 2]),), 4), ((slice(None), torch.tensor([3, 0])), 8),
                       ((torch.tensor([0, 2]), torch.tensor([1, 3])), 6)]:
        t = torch.zeros(3, 4, 5)
        e = ember.zeros(3, 4, 5)
        t[idx] = value
        e_idx = tuple(E(i) if isinstance(i, torch.Tensor) else i for i in idx)
        e[e_idx] = value
        assert e.tolist() == t.tolist(), idx
    t, e = torch.arange(12.).reshape(3, 4), ember.arange(12.).reshape(3, 4)
    t[t > 5] = 0
    e[e > 5] = 0
    assert e.tolist() == t.tolist()
    t[1] = torch.tensor([1., 2., 3., 4.])
    e[1] = ember.tensor([1., 2., 3., 4.])
    assert e.tolist() == t.tolist()
    t[:, 0] = torch.tensor([9., 8., 7.])
    e[:, 0] = [9., 8., 7.]
    assert e.tolist() == t.tolist()


def test_reductions_and_views_against_pytorch():
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((2, 3, 4)).astype(np.float32)
    e, t = ember.from_numpy(x_np.copy()), torch.from_numpy(x_np)
    same(e.sum(), t.sum())
    same(e.sum(dim=1), t.sum(dim=1))
    same(e.sum((0, 2), keepdim=True), t.sum((0, 2), keepdim=True))
    same(e.mean(-1), t.mean(-1))
    same(e.var(1), t.var(1))
    same(e.std(), t.std())
    same(e.amax(dim=(1, 2)), t.amax(dim=(1, 2)))
    values, indices = e.max(dim=2)
    tv, ti = t.max(dim=2)
    same(values, tv)
    same(indices, ti)
    assert e.max(1).indices.tolist() == t.max(1).indices.tolist()
    same(e.argmax(), t.argmax())
    same(e.softmax(-1), t.softmax(-1))
    same(e.logsumexp(1), t.logsumexp(1))
    same(e.permute(2, 0, 1), t.permute(2, 0, 1))
    same(e.transpose(0, 2).contiguous().view(-1, 6), t.transpose(0, 2).contiguous().view(-1, 6))
    same(e.reshape(6, 4), t.reshape(6, 4))
    same(e.unsqueeze(1).expand(2, 5, 3, 4), t.unsqueeze(1).expand(2, 5, 3, 4))
    same(e.flatten(1), t.flatten(1))
    same(e.T, t.permute(2, 1, 0))
    assert [c.shape for c in e.chunk(2, 2)] == [tuple(c.shape) for c in t.chunk(2, 2)]
    assert [s.shape for s in e.split([1, 2], 1)] == [tuple(s.shape) for s in t.split([1, 2], 1)]
    same(ember.cat([e, e], 1), torch.cat([t, t], 1))
    same(ember.stack([e, e]), torch.stack([t, t]))
    same(e.repeat(2, 1, 3), t.repeat(2, 1, 3))
    same(e.transpose(0, 2).repeat((1, 2, 1, 2)), t.transpose(0, 2).repeat((1, 2, 1, 2)))
    same(e.tile(2), t.tile(2))
    same(ember.tile(e, (2, 1)), torch.tile(t, (2, 1)))
    same(ember.where(e > 0, e, 0.0), torch.where(t > 0, t, torch.tensor(0.0)))
    same(e.masked_select(e > 0), t.masked_select(t > 0))
    same(e.nonzero(), t.nonzero())
    same(ember.exp(e), torch.exp(t))
    same(ember.sum(e, dim=1), torch.sum(t, dim=1))


def test_conversions():
    x = ember.tensor([[1.5, -2.0]])
    assert x.tolist() == [[1.5, -2.0]]
    assert x.int().tolist() == [[1, -2]] and x.long().dtype is ember.int64
    assert x.double().dtype is ember.float64 and x.half().dtype is ember.float16
    assert x.bool().tolist() == [[True, True]]
    assert x.to(ember.float64).dtype is ember.float64
    assert x.to("cpu:1").device == ember.device("cpu:1")
    assert x.to(ember.zeros(1, dtype=ember.int32)).dtype is ember.int32
    assert x.to("cpu", ember.float16).dtype is ember.float16
    assert float(ember.tensor(2.5)) == 2.5 and int(ember.tensor(3)) == 3
    assert bool(ember.tensor([1])) is True
    assert [0, 1, 2][ember.tensor(1)] == 1
    assert len(ember.zeros(4, 2)) == 4
    assert [r.tolist() for r in ember.arange(4).reshape(2, 2)] == [[0, 1], [2, 3]]
    assert ember.tensor(4).item() == 4 and isinstance(ember.tensor(4).item(), int)
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ember.ones(2))
    y = x.clone()
    y[0, 0] = 0
    assert x[0, 0].item() == 1.5
    assert x.new_zeros((2, 2)).dtype is ember.float32 and x.new_full((1,), 3).tolist() == [3.0]


def test_shape_and_size():
    x = ember.zeros(2, 3, 4)
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert repr(x.shape) == "ember.Size([2, 3, 4])" and x.shape.numel() == 24
    assert x.stride() == (12, 4, 1) and x.dim() == 3 and x.ndim == 3
    assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
    assert x.element_size() == 4 and x.nbytes == 96
