"""ember.cuda from Python on a real GPU (skipped, with the reason, where none is usable): devices,
memory statistics against the driver, streams and events, transfers, models on the GPU, DLPack
with PyTorch's CUDA tensors."""
import numpy as np
import pytest

import ember
from conftest import requires_cuda

pytestmark = requires_cuda


def test_devices_and_properties():
    n = ember.cuda.device_count()
    assert n >= 1 and ember.cuda.current_device() == 0
    p = ember.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.major >= 7 and p.name == ember.cuda.get_device_name(0)
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    assert ember.cuda.try_gpu() == ember.device("cuda:0")


def test_tensors_move_and_compute():
    x = ember.randn(64, 32)
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device("cuda:0") and g.get_device() == 0
    np.testing.assert_allclose((g @ g.T).cpu().numpy(), (x @ x.T).numpy(), rtol=1e-4, atol=1e-4)
    assert g.to("cpu").device == ember.device("cpu")
    with pytest.raises(RuntimeError, match="cuda:0"):
        g + x


def test_memory_statistics_follow_the_driver():
    ember.cuda.empty_cache()
    base = ember.cuda.memory_allocated()
    t = ember.empty(64 * 1024 * 1024 // 4, device="cuda")
    assert ember.cuda.memory_allocated() - base >= 64 * 1024 * 1024
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    assert ember.cuda.memory_cached() == ember.cuda.memory_reserved()
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    del t
    assert ember.cuda.memory_allocated() == base
    ember.cuda.empty_cache()
    assert "Allocated memory" in ember.cuda.memory_summary() or ember.cuda.memory_summary()


def test_out_of_memory_is_its_own_error():
    free, total = ember.cuda.mem_get_info()
    with pytest.raises(ember.cuda.OutOfMemoryError):
        ember.empty(total, dtype=ember.float64, device="cuda")


def test_streams_and_events():
    s = ember.cuda.Stream()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    x = ember.randn(1024, 1024, device="cuda")
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        start.record()
        y = x @ x
        end.record()
    assert ember.cuda.current_stream() != s
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    ember.cuda.current_stream().wait_stream(s)
    y.record_stream(ember.cuda.current_stream())
    ember.cuda.synchronize()
    assert y.shape == (1024, 1024)


def test_model_on_gpu_and_dlpack_with_pytorch():
    model = ember.models.LeNet().cuda()
    out = model(ember.randn(8, 1, 28, 28, device="cuda"))
    assert out.is_cuda and out.shape == (8, 10)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    t = torch.arange(6, device="cuda", dtype=torch.float32)
    e = ember.from_dlpack(t)
    e[0] = 10
    torch.cuda.synchronize()
    assert t[0].item() == 10 and e.is_cuda
    back = torch.from_dlpack(e)
    assert back.data_ptr() == t.data_ptr()
