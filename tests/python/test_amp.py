"""Mixed precision and ResNet-18 from Python: ember.autocast against torch.autocast("cpu") of
PyTorch 1.13 (dtypes exactly, values within bfloat16's tolerance), GradScaler's skips, backoff and
growth, ResNet-18's state dict in PyTorch's model, adaptive pooling and interpolate."""
import importlib.util
import os

import numpy as np
import pytest
import torch

import ember
from ember import nn
import ember.nn.functional as F

from conftest import source_dir


def both(a):
    a = np.asarray(a, dtype=np.float32)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def test_autocast_casts_as_torch_on_the_cpu():
    rng = np.random.default_rng(0)
    xe, xt = both(rng.standard_normal((4, 8)))
    we, wt = both(rng.standard_normal((5, 8)))
    ye, yt = ember.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 2, 3])
    with ember.autocast("cpu"):
        le = F.linear(xe, we)
        se = F.softmax(le, 1)
        ce = F.cross_entropy(le, ye)
        me = xe @ we.t()
    with torch.autocast("cpu"):
        lt = torch.nn.functional.linear(xt, wt)
        st = torch.softmax(lt, 1)
        ct = torch.nn.functional.cross_entropy(lt, yt)
        mt = xt @ wt.t()
    for e, t in ((le, lt), (se, st), (ce, ct), (me, mt)):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2e-2, atol=2e-2)
    assert le.dtype == ember.bfloat16 and ce.dtype == ember.float32


def test_regions_nest_and_can_switch_autocast_off():
    x = ember.randn(2, 3)
    w = ember.randn(4, 3)
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert ember.is_autocast_enabled("cpu")
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert F.linear(x, w).dtype == ember.float32
        assert F.linear(x, w).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert F.linear(x, w).dtype == ember.float32
    with ember.cpu.amp.autocast():
        assert ember.amp.get_autocast_dtype("cpu") == ember.bfloat16
    with ember.cuda.amp.autocast():  # only state: nothing here runs on CUDA
        assert ember.is_autocast_enabled("cuda") and ember.is_autocast_enabled()
    assert not ember.is_autocast_enabled()


def test_autocast_decorates_a_function_and_survives_an_exception():
    @ember.autocast("cpu")
    def forward(x, w):
        return F.linear(x, w)

    assert forward(ember.randn(2, 3), ember.randn(4, 3)).dtype == ember.bfloat16
    with pytest.raises(ValueError):
        with ember.autocast("cpu"):
            raise ValueError("inside")
    assert not ember.is_autocast_enabled("cpu")
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        with ember.autocast("tpu"):
            pass


def test_gradients_flow_back_through_the_casts_in_float32():
    model = nn.Linear(3, 2)
    with ember.autocast("cpu"):
        out = model(ember.randn(5, 3))
        loss = F.cross_entropy(out, ember.tensor([0, 1, 0, 1, 0]))
    loss.backward()
    assert out.dtype == ember.bfloat16 and loss.dtype == ember.float32
    assert model.weight.grad.dtype == ember.float32 and model.bias.grad.dtype == ember.float32


def test_grad_scaler_skips_backs_off_and_grows():
    model = nn.Linear(2, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.cuda.amp.GradScaler(init_scale=8.0, growth_interval=2)
    x = ember.ones(1, 2)
    scales, weights = [], []
    for step in range(5):
        opt.zero_grad()
        scaler.scale(model(x).sum()).backward()
        if step == 1:
            model.weight.grad[0, 0] = float("inf")  # an overflow: this step must be skipped
        before = model.weight.detach().clone()
        scaler.step(opt)
        weights.append(not ember.equal(before, model.weight.detach()))
        scaler.update()
        scales.append(scaler.get_scale())
    # Step 1 skipped and halved the scale; two clean steps after it doubled it back.
    assert weights == [True, False, True, True, True]
    assert scales == [8.0, 4.0, 4.0, 8.0, 8.0]
    state = scaler.state_dict()
    assert state == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 2, "_growth_tracker": 1}
    other = ember.amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == 8.0 and other.state_dict() == state
    with pytest.raises(RuntimeError, match="missing key"):
        other.load_state_dict({"scale": 1.0})


def test_unscale_before_clipping_gives_the_true_gradients():
    model = nn.Linear(2, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler(init_scale=1024.0)
    scaler.scale(model(ember.ones(3, 2)).sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.numpy(), [[3.0, 3.0]])
    scaler.step(opt)
    scaler.update()


def torch_resnet():
    path = os.path.join(source_dir(), "bench", "pytorch_resnet.py")
    spec = importlib.util.spec_from_file_location("pytorch_resnet", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("size", [28, 96])
def test_resnet18_state_dict_loads_in_pytorch_with_equal_outputs(size):
    ember.manual_seed(0)
    model = ember.models.resnet18_fashion_mnist(size)
    x = ember.randn(2, 1, size, size)
    model.train()
    model(x)  # moves the running statistics off their initial values
    model.eval()
    ref = torch_resnet().resnet18_fashion_mnist(size).eval()
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()}
    ref.load_state_dict(state)  # strict: the same names and shapes
    with ember.no_grad(), torch.no_grad():
        np.testing.assert_allclose(model(x).numpy(), ref(torch.from_numpy(x.numpy())).numpy(),
                                   rtol=1e-4, atol=1e-4)
    back = ember.models.resnet18_fashion_mnist(size)
    back.load_state_dict({k: ember.from_numpy(v.numpy()) for k, v in ref.state_dict().items()})
    back.eval()
    with ember.no_grad():
        np.testing.assert_allclose(back(x).numpy(), model(x).numpy(), rtol=1e-6, atol=1e-6)


def test_resnet18_is_torchvisions_network():
    model = ember.models.resnet18(num_classes=7)
    assert model.fc.out_features == 7 and model.conv1.weight.shape == (64, 3, 7, 7)
    assert "layer4.1.bn2.running_var" in model.state_dict()
    assert model(ember.randn(1, 3, 64, 64)).shape == (1, 7)


def test_adaptive_avg_pool2d_and_interpolate_match_torch():
    rng = np.random.default_rng(3)
    xe, xt = both(rng.standard_normal((2, 3, 7, 9)))
    for size in (1, (3, 4), (7, 9)):
        np.testing.assert_allclose(F.adaptive_avg_pool2d(xe, size).numpy(),
                                   torch.nn.functional.adaptive_avg_pool2d(xt, size).numpy(),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d((1, 1))(xe).numpy(),
                               torch.nn.AdaptiveAvgPool2d((1, 1))(xt).numpy(), rtol=1e-5, atol=1e-6)
    for kw in (dict(size=(14, 18)), dict(size=5, mode="bilinear", align_corners=False),
               dict(scale_factor=2), dict(scale_factor=2, mode="bilinear")):
        np.testing.assert_allclose(F.interpolate(xe, **kw).numpy(),
                                   torch.nn.functional.interpolate(xt, **kw).numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=str(kw))
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(xe)  # PyTorch's message
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(xe, size=4, scale_factor=2)
