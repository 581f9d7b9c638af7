"""DataParallel and its primitives on a Python Module subclass, over two virtual CPU devices
(conftest: EMBER_CPU_DEVICES=2): every replica runs the subclass's Python forward, and gradients
of the replicas reach the original's parameters."""
import threading

import numpy as np
import pytest

import ember
from ember import nn
import ember.nn.functional as F

DEVICES = ["cpu:0", "cpu:1"]


class Tagged(nn.Module):
    """Records the device and thread each replica's forward ran on."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.calls = []

    def forward(self, x, scale=None):
        self.calls.append((x.get_device(), threading.get_ident()))
        y = self.fc(x)
        return y if scale is None else y * scale


def test_primitives_run_the_python_forward_on_each_device():
    model = Tagged()
    x = ember.randn(6, 4)
    chunks = nn.parallel.scatter(x, DEVICES)
    assert [c.shape[0] for c in chunks] == [3, 3]
    assert [c.device for c in chunks] == [ember.device(d) for d in DEVICES]
    replicas = nn.parallel.replicate(model, DEVICES)
    assert all(type(r) is Tagged for r in replicas)
    assert [r.fc.weight.device for r in replicas] == [ember.device(d) for d in DEVICES]
    outs = nn.parallel.parallel_apply(replicas, chunks)
    assert [o.device for o in outs] == [ember.device(d) for d in DEVICES]
    out = nn.parallel.gather(outs, "cpu:0")
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_data_parallel_matches_one_device_and_sums_gradients():
    ember.manual_seed(0)
    model = Tagged()
    dp = nn.DataParallel(model, device_ids=DEVICES)
    x, y = ember.randn(7, 4), ember.tensor([0, 1, 2, 0, 1, 2, 0])
    F.cross_entropy(dp(x), y).backward()
    # The replicas share the original's __dict__ (a shallow copy, as PyTorch's): both ran, one
    # per device, each in a thread of its own.
    devices, threads = zip(*model.calls)
    assert sorted(devices) == [-1, 1] and len(set(threads)) == 2  # cpu:0 reads -1, as PyTorch's cpu
    grads = [p.grad.clone() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    F.cross_entropy(model(x), y).backward()
    for g, p in zip(grads, model.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(dp.module, Tagged)
    assert dp.device_ids == [ember.device("cpu:0"), ember.device("cpu:1")]


def test_data_parallel_with_several_arguments():
    model = Tagged()
    dp = nn.DataParallel(model, device_ids=DEVICES)
    x = ember.randn(4, 4)
    scale = ember.full((4, 1), 2.0)
    np.testing.assert_allclose(dp(x, scale).detach().numpy(), (model(x) * 2).detach().numpy(), rtol=1e-6)
    out = nn.parallel.data_parallel(model, (x, scale), device_ids=DEVICES)
    assert out.shape == (4, 3)


def test_replica_errors_name_the_replica():
    class Broken(nn.Module):
        def forward(self, x):
            if x.get_device() == 1:
                raise ValueError("replica failure")
            return x

    dp = nn.DataParallel(Broken(), device_ids=DEVICES)
    with pytest.raises(ValueError, match="Caught ValueError in replica 1 on device cpu:1: replica failure"):
        dp(ember.ones(4, 2))


def test_parameters_must_be_on_the_first_device():
    model = Tagged().to("cpu:1")
    dp = nn.DataParallel(model, device_ids=DEVICES)
    with pytest.raises(RuntimeError, match="device_ids\\[0\\]"):
        dp(ember.ones(2, 4))
