"""Memory shared with NumPy and PyTorch without copies: from_numpy / numpy() / np.asarray, and
DLPack both ways (a write on one side is read on the other)."""
import numpy as np
import pytest
import torch

import ember


def test_numpy_both_ways_share_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1
    assert a[1, 2] == -1
    n = t.numpy()
    n[0, 1] = 7
    assert t[0, 1].item() == 7 and a[0, 1] == 7
    v = np.asarray(t)
    assert v.ctypes.data == a.ctypes.data
    assert ember.from_numpy(a[:, 1]).stride() == (3,)  # a strided view, not a copy
    for dt in [np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_]:
        e = ember.from_numpy(np.zeros(2, dtype=dt))
        assert e.numpy().dtype == dt
    del a, n, v
    assert t.sum().item() == 42 + 1 + 2 + 3 + 4 - 1 + 7 - 1


def test_numpy_errors():
    with pytest.raises(TypeError, match="uint16"):
        ember.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(np.arange(4)[::-1])
    with pytest.raises(RuntimeError, match="requires grad"):
        ember.ones(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="bfloat16"):
        ember.ones(2, dtype=ember.bfloat16).numpy()


def test_dlpack_with_pytorch_both_ways():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    e = ember.from_dlpack(t)
    t[0, 0] = 100
    assert e[0, 0].item() == 100
    e[2, 3] = -5
    assert t[2, 3].item() == -5
    back = torch.from_dlpack(e)
    back[1, 1] = 9
    assert e[1, 1].item() == 9
    assert e.shape == (3, 4) and back.data_ptr() == t.data_ptr()
    sliced = ember.from_dlpack(t[:, 1::2])
    assert sliced.tolist() == t[:, 1::2].tolist() and sliced.stride() == (4, 2)
    for dt in [torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]:
        x = torch.ones(3, dtype=dt)
        assert torch.from_dlpack(ember.from_dlpack(x)).dtype == dt
    cap = ember.utils.dlpack.to_dlpack(ember.ones(2))
    assert torch.utils.dlpack.from_dlpack(cap).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="consumed"):
        ember.from_dlpack(cap)  # a capsule is used once
    assert ember.ones(1).__dlpack_device__() == (1, 0)


def test_dlpack_with_numpy():
    a = np.arange(4, dtype=np.float64)
    e = ember.from_dlpack(a)
    a[0] = 5
    assert e[0].item() == 5
    n = np.from_dlpack(e)  # NumPy 1.24 makes DLPack imports read-only; ember writes, NumPy reads
    e[1] = 8
    assert n[1] == 8 and a[1] == 8
