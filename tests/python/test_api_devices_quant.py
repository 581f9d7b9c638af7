"""Device-agnostic streams and events (torch.Stream, torch.Event), the autocast state of devices
ember has no backend for (torch.is_autocast_xla_enabled and its kin), fake quantization and
slice_inverse. Names PyTorch 1.13 has are checked against it; names new in 2.x against values
printed by PyTorch 2.6 in a Debian 13 root (docs/api-public.md says how to make one)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


def test_stream_and_event_on_the_cpu_as_pytorch_2_6():
    # PyTorch 2.6 without an accelerator: torch.Stream() is the CPU's one stream
    # ("torch.Stream device_type=cpu, device_index=-1, stream_id=0"), always done, and events
    # cannot be recorded ("cpu backend doesn't support events.").
    s = ember.Stream()
    assert (s.device_type, s.device_index, s.stream_id) == ("cpu", -1, 0)
    assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
    assert s.query() and s == ember.Stream("cpu", priority=-1)
    s.synchronize()
    e = ember.Event(enable_timing=True)
    assert e.query() and e.event_id == 0 and str(e.device) == "cpu"
    e.synchronize()
    for call in (e.record, s.record_event, lambda: s.wait_stream(ember.Stream())):
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
            call()
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="cuda is not available"):
            ember.Stream("cuda")


@pytest.mark.parametrize("dev,default", [("xla", "bfloat16"), ("ipu", "float16")])
def test_autocast_state_of_devices_without_a_backend(dev, default):
    # PyTorch 2.6: the deprecated per-device accessors warn, and the state is kept per thread
    # with xla's default bfloat16 and ipu's float16.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert getattr(ember, f"is_autocast_{dev}_enabled")() is False
        assert getattr(ember, f"get_autocast_{dev}_dtype")() == getattr(ember, default)
        getattr(ember, f"set_autocast_{dev}_enabled")(True)
        getattr(ember, f"set_autocast_{dev}_dtype")(ember.float32)
    assert all(issubclass(w.category, DeprecationWarning) for w in caught)
    assert f"torch.is_autocast_enabled('{dev}')" in str(caught[0].message)
    try:
        assert ember.is_autocast_enabled(dev) and ember.get_autocast_dtype(dev) == ember.float32
        assert not ember.is_autocast_enabled("cpu")
    finally:
        ember.set_autocast_enabled(dev, False)
        ember.set_autocast_dtype(dev, getattr(ember, default))


@pytest.mark.parametrize("scale,zp,qmin,qmax", [(0.5, 2, -4, 5), (0.1, 0, 0, 255),
                                                 (0.037, -3, -128, 127)])
def test_fake_quantize_per_tensor_matches_pytorch(scale, zp, qmin, qmax):
    torch.manual_seed(0)
    x = torch.randn(200) * 4
    x.requires_grad_()
    ex = E(x).requires_grad_()
    want = torch.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
    got = ember.fake_quantize_per_tensor_affine(ex, scale, zp, qmin, qmax)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    g = torch.randn(200)
    want.backward(g)
    got.backward(E(g))
    np.testing.assert_array_equal(ex.grad.numpy(), x.grad.numpy())
    t_args = (torch.tensor(scale), torch.tensor(zp, dtype=torch.int32))
    got = ember.fake_quantize_per_tensor_affine(E(x), E(t_args[0]), E(t_args[1]), qmin, qmax)
    want = torch.fake_quantize_per_tensor_affine(x, *t_args, qmin, qmax)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_fake_quantize_per_channel_matches_pytorch_and_errors():
    torch.manual_seed(1)
    x = torch.randn(4, 3, 5).requires_grad_()
    ex = E(x).requires_grad_()
    scale, zp = torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0, 5, -7], dtype=torch.int32)
    want = torch.fake_quantize_per_channel_affine(x, scale, zp, 1, -8, 7)
    got = ember.fake_quantize_per_channel_affine(ex, E(scale), E(zp), 1, -8, 7)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy(), x.grad.numpy())
    with pytest.raises(RuntimeError, match="`quant_min` should be less than or equal"):
        ember.fake_quantize_per_tensor_affine(ex, 0.1, 0, 5, 4)
    with pytest.raises(RuntimeError, match="`zero_point` must be between"):
        ember.fake_quantize_per_tensor_affine(ex, 0.1, 9, 0, 4)
    with pytest.raises(RuntimeError, match="expected scale and zero_point of 3"):
        ember.fake_quantize_per_channel_affine(ex, E(scale)[:2], E(zp)[:2], 1, -8, 7)


def test_slice_inverse_is_a_view_with_src_geometry():
    # PyTorch 2.6: slice_inverse(base, base[2:8:2], 0, 2, 8, 2) -> tensor([2., 4., 6.]),
    # stride (2,), storage offset 2, sharing base's storage.
    base = ember.arange(10.)
    out = ember.slice_inverse(base, base[2:8:2], 0, 2, 8, 2)
    assert out.tolist() == [2.0, 4.0, 6.0] and out.stride() == (2,) and out.storage_offset() == 2
    out[0] = -1
    assert base[2].item() == -1
    assert base.slice_inverse(base[2:8:2], 0, 2, 8, 2).tolist() == [-1.0, 4.0, 6.0]
