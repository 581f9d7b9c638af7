"""ember.vision's models, io and FakeData against torchvision 0.14 (Debian's, over PyTorch 1.13):
state dict keys and shapes, outputs under torchvision's own (random) weights, the initialisation,
the weights enums and legacy arguments; read_image on files PIL writes; FakeData's samples."""
import math

import numpy as np
import pytest
import torch
import torchvision
import torchvision.io as tio
from PIL import Image

import ember
import ember.vision as ev
import ember.vision.io as eio


@pytest.fixture(autouse=True)
def seeded_torch():
    """torchvision's models initialise from torch's global generator: the same weights each run."""
    torch.manual_seed(0)


VGGS = ["vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


def keys_and_shapes(model):
    return [(k, tuple(v.shape)) for k, v in model.state_dict().items()]


def randomized(model, seed=0):
    """torchvision's model with random batch-norm statistics and affine parameters (its own
    initialisation leaves them at the identity, which would test nothing)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=g) - 0.5)
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=g) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return model


def load_torch_weights(e, t):
    """Copies torchvision model t's state dict into ember model e through NumPy."""
    e.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()})
    return e


def assert_close(e, t, atol=1e-4, rtol=1e-4):
    e = e.detach().contiguous().numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert e.shape == t.shape, (e.shape, t.shape)
    np.testing.assert_allclose(e, t, atol=atol, rtol=rtol)


def same_outputs(e, t, shape, seed=1):
    e.eval()
    t.eval()
    x = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    with torch.no_grad():
        expected = t(torch.from_numpy(x))
    with ember.no_grad():
        assert_close(e(ember.from_numpy(x)), expected)


# --- models: state dicts, outputs under torchvision's weights, initialisation --------------------

@pytest.mark.parametrize("name", ["resnet101", "resnet152"])
def test_big_models_have_torchvisions_state_dict(name):
    e, t = getattr(ev.models, name)(), getattr(torchvision.models, name)()
    assert keys_and_shapes(e) == keys_and_shapes(t)


@pytest.mark.parametrize("name", VGGS)
def test_vgg_builders_make_torchvisions_features(name, monkeypatch):
    # Every VGG shares one classifier (test_vgg below); eight 130M-parameter networks would take
    # a minute to build, so here the builders return just their `features`.
    monkeypatch.setattr(ev.models.vgg, "VGG", lambda features, **kwargs: features)
    monkeypatch.setattr(torchvision.models.vgg, "VGG", lambda features, **kwargs: features)
    e, t = getattr(ev.models, name)(), getattr(torchvision.models, name)()
    assert keys_and_shapes(e) == keys_and_shapes(t)
    assert [type(m).__name__ for m in e] == [type(m).__name__ for m in t]


def std_ratio(w, expected):
    return float(w.detach().std()) / expected


def test_vgg():
    e = ev.models.vgg11_bn(num_classes=10)
    # torchvision's initialisation: convolutions kaiming_normal_ (fan_out), linear N(0, 0.01).
    for name, m in e.named_modules():
        if isinstance(m, (ember.nn.Conv2d, ember.nn.Linear)):
            assert float(m.bias.abs().max()) == 0
        if isinstance(m, ember.nn.Conv2d) and m.weight.numel() > 10000:
            fan_out = m.weight.shape[0] * 9
            assert abs(std_ratio(m.weight, math.sqrt(2 / fan_out)) - 1) < 0.05, name
        elif isinstance(m, ember.nn.Linear):
            assert abs(std_ratio(m.weight, 0.01) - 1) < 0.05, name
    t = randomized(torchvision.models.vgg11_bn(num_classes=10))
    assert keys_and_shapes(e) == keys_and_shapes(t)
    # 64x64 leaves 2x2 features, which the adaptive pool spreads to 7x7.
    same_outputs(load_torch_weights(e, t), t, (1, 3, 64, 64))


@pytest.mark.parametrize("name, shape", [("alexnet", (1, 3, 64, 64)), ("resnet34", (2, 3, 48, 48)),
                                         ("resnext50_32x4d", (1, 3, 40, 40)),
                                         ("squeezenet1_0", (1, 3, 64, 64)),
                                         ("squeezenet1_1", (1, 3, 64, 64))])
def test_outputs_under_torchvisions_weights(name, shape):
    e, t = getattr(ev.models, name)(), randomized(getattr(torchvision.models, name)())
    assert keys_and_shapes(e) == keys_and_shapes(t)
    if name.startswith("squeezenet"):
        # Its classifier starts with std 0.01 and a ReLU: most logits would be 0.
        torch.nn.init.normal_(t.classifier[1].weight, std=0.1)
    same_outputs(load_torch_weights(e, t), t, shape)
    e = getattr(ev.models, name)(num_classes=7)
    assert keys_and_shapes(e)[-2:] == keys_and_shapes(getattr(torchvision.models, name)(
        num_classes=7))[-2:]


def test_resnet50_trains_as_torchvisions():
    t = randomized(torchvision.models.resnet50(num_classes=5))
    e = ev.models.resnet50(num_classes=5)
    assert keys_and_shapes(e) == keys_and_shapes(t)
    load_torch_weights(e, t)
    x = np.random.default_rng(2).standard_normal((2, 3, 48, 48), dtype=np.float32)
    # Training mode: batch statistics, and the running ones updated.
    with torch.no_grad():
        expected = t(torch.from_numpy(x))
    with ember.no_grad():
        assert_close(e(ember.from_numpy(x)), expected)
    esd, tsd = e.state_dict(), t.state_dict()
    for k in ("bn1.running_mean", "layer4.2.bn3.running_var", "layer1.0.downsample.1.running_mean",
              "layer3.5.bn2.num_batches_tracked"):
        assert_close(esd[k], tsd[k])
    # Gradients, in eval mode: a batch norm over 2x2x2 values is too ill-conditioned in float32
    # for training-mode gradients to agree (PyTorch's float32 and float64 ones differ by 4%).
    e.eval()
    t.eval()
    t(torch.from_numpy(x)).square().sum().backward()
    e(ember.from_numpy(x)).square().sum().backward()
    eparams, tparams = dict(e.named_parameters()), dict(t.named_parameters())
    for k in ("fc.weight", "layer4.2.conv3.weight", "layer2.0.downsample.1.bias", "bn1.weight",
              "conv1.weight"):
        scale = float(tparams[k].grad.abs().max())
        assert_close(eparams[k].grad, tparams[k].grad, atol=1e-4 * scale, rtol=1e-4)


def test_resnet_module_holds_the_python_resnets():
    from ember.vision.models.resnet import BasicBlock, Bottleneck, ResNet, resnet50  # noqa: F401
    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=3)
    t = torchvision.models.resnet.ResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1],
                                         num_classes=3)
    assert keys_and_shapes(model) == keys_and_shapes(t)
    assert type(model).__module__ == "ember.vision.models.resnet"


def test_initialisation_is_torchvisions():
    r = ev.models.resnet34(zero_init_residual=True)
    for name, m in r.named_modules():
        if isinstance(m, ember.nn.Conv2d) and m.weight.numel() > 10000:
            fan_out = m.weight.shape[0] * m.weight.shape[2] * m.weight.shape[3]
            assert abs(std_ratio(m.weight, math.sqrt(2 / fan_out)) - 1) < 0.05, name
        elif isinstance(m, ember.nn.BatchNorm2d):
            # zero_init_residual: each block's last batch norm starts at 0.
            one = 0 if name.endswith("bn2") and name.startswith("layer") else 1
            assert float((m.weight - one).abs().max()) == 0 and float(m.bias.abs().max()) == 0
    s = ev.models.squeezenet1_1()
    for name, m in s.named_modules():
        if isinstance(m, ember.nn.Conv2d):
            assert float(m.bias.abs().max()) == 0
            if name == "classifier.1":
                assert abs(std_ratio(m.weight, 0.01) - 1) < 0.05
            elif m.weight.numel() > 10000:
                bound = math.sqrt(6 / m.weight[0].numel())  # kaiming_uniform_: a=0, fan_in
                assert float(m.weight.abs().max()) <= bound
                assert abs(std_ratio(m.weight, bound / math.sqrt(3)) - 1) < 0.05, name


# --- models: weights and legacy arguments -------------------------------------------------------

def weights_enums():
    return [n for n in ev.models.__all__ if n.endswith("_Weights")]


def test_weights_enums_are_torchvisions():
    names = weights_enums()
    assert len(names) == 21
    for name in names:
        e, t = getattr(ev.models, name), getattr(torchvision.models, name)
        assert list(e.__members__) == list(t.__members__), name
        for member in e.__members__:
            em, tm = e[member], t[member]
            assert repr(em) == repr(tm) and em.url == tm.url
            for key in ("num_params", "min_size", "_metrics", "recipe"):
                np.testing.assert_equal(em.meta[key], tm.meta[key])
            categories = tm.meta["categories"]
            assert em.meta["num_classes"] == (None if categories is None else len(categories))
            et, tt = em.transforms(), tm.transforms()
            for attr in ("crop_size", "resize_size", "mean", "std"):
                assert getattr(et, attr) == getattr(tt, attr), (name, member, attr)


@pytest.mark.parametrize("builder, weights", [("vgg16", "VGG16_Weights"),
                                              ("squeezenet1_1", "SqueezeNet1_1_Weights"),
                                              ("resnet50", "ResNet50_Weights"),
                                              ("alexnet", "AlexNet_Weights")])
def test_pretrained_weights_need_a_local_file(builder, weights, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    build, enum = getattr(ev.models, builder), getattr(ev.models, weights)
    with pytest.raises(RuntimeError, match="no network") as e:
        build(weights=enum.DEFAULT)
    assert enum.DEFAULT.url.rsplit("/", 1)[1][:-4] in str(e.value)
    with pytest.raises(RuntimeError, match="no network"):
        build(weights="DEFAULT")
    with pytest.raises(ValueError, match="num_classes"):
        build(weights="DEFAULT", num_classes=10)
    with pytest.warns(UserWarning, match="pretrained"):
        with pytest.raises(RuntimeError, match="no network") as e:
            build(pretrained=True)
    # pretrained=True means the first weights, as in torchvision.
    assert enum.IMAGENET1K_V1.url.rsplit("/", 1)[1][:-4] in str(e.value)
    with pytest.raises(TypeError, match="Invalid Weight"):
        build(weights=ev.models.ResNet18_Weights.DEFAULT)


def test_weights_load_from_a_local_file_or_the_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    t = torchvision.models.squeezenet1_1()
    path = str(tmp_path / "w.safetensors")
    ember.save({k: ember.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()}, path)
    e = ev.models.squeezenet1_1(weights=path)
    same_outputs(e, t, (1, 3, 32, 32))
    cached = ev.models.SqueezeNet1_1_Weights.DEFAULT.local_path()
    assert cached == str(tmp_path / "hub" / "checkpoints" / "squeezenet1_1-b8a52dc0.safetensors")
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    ember.save(e, cached)
    loaded = ev.models.squeezenet1_1(weights=ev.models.SqueezeNet1_1_Weights.IMAGENET1K_V1)
    same_outputs(loaded, t, (1, 3, 32, 32))


def test_legacy_arguments():
    with pytest.warns(UserWarning, match="pretrained"):
        assert ev.models.squeezenet1_0(pretrained=False) is not None
    with pytest.warns(UserWarning, match="positional"):
        model = ev.models.squeezenet1_0(False, True, num_classes=3)
    assert tuple(model.state_dict()["classifier.1.weight"].shape) == (3, 512, 1, 1)
    with pytest.raises(TypeError):
        ev.models.squeezenet1_0(False, True, 3)
    with pytest.raises(ValueError, match="Unsupported SqueezeNet"):
        ev.models.squeezenet.SqueezeNet("2_0")
    with pytest.raises(ValueError, match="groups"):
        ev.models.resnext50_32x4d(groups=2)


# --- io ----------------------------------------------------------------------------------------

def write_images(root):
    rng = np.random.default_rng(3)
    h, w = 11, 14
    rgb = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")
    images = {
        "1.png": Image.fromarray(rng.integers(0, 2, (h, w), dtype=np.uint8).astype(bool)),
        "L.png": Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8), "L"),
        "LA.png": Image.fromarray(rng.integers(0, 256, (h, w, 2), dtype=np.uint8), "LA"),
        "RGB.png": rgb,
        "RGBA.png": Image.fromarray(rng.integers(0, 256, (h, w, 4), dtype=np.uint8), "RGBA"),
        "P.png": rgb.convert("P", palette=Image.ADAPTIVE, colors=16),
        "L.jpg": Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8), "L"),
        "RGB.jpg": rgb,
    }
    for name, im in images.items():
        im.save(root / name)
    images["P.png"].save(root / "Ptrns.png", transparency=5)
    Image.fromarray(rng.integers(0, 65536, (h, w), dtype=np.uint16), "I;16").save(root / "16.png")
    return sorted(list(images) + ["Ptrns.png"])


# torchvision's libpng setup adds alpha 1 (not 255) to 1-bit images and misreads palette images
# without transparency in the alpha modes; ember gives an opaque alpha there.
TORCHVISION_BUGS = {("1.png", "GRAY_ALPHA"), ("1.png", "RGB_ALPHA"), ("P.png", "GRAY_ALPHA"),
                    ("P.png", "RGB_ALPHA")}


def test_read_image_equals_torchvisions(tmp_path):
    for name in write_images(tmp_path):
        path = str(tmp_path / name)
        for mode in eio.ImageReadMode.__members__:
            if (name, mode) in TORCHVISION_BUGS:
                continue
            try:
                expected = tio.read_image(path, getattr(tio.ImageReadMode, mode)).numpy()
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    eio.read_image(path, getattr(eio.ImageReadMode, mode))
                continue
            got = eio.read_image(path, getattr(eio.ImageReadMode, mode))
            assert got.dtype == ember.uint8
            np.testing.assert_array_equal(got.numpy(), expected, err_msg=f"{name} {mode}")
        data = eio.read_file(path)
        np.testing.assert_array_equal(data.numpy(), tio.read_file(path).numpy())
        np.testing.assert_array_equal(eio.decode_image(data).numpy(),
                                      tio.read_image(path).numpy())
    with pytest.raises(RuntimeError, match="8-bit"):
        eio.read_image(str(tmp_path / "16.png"))
    jpeg = eio.read_file(str(tmp_path / "RGB.jpg"))
    with pytest.raises(RuntimeError, match="png"):
        eio.decode_png(jpeg)
    assert tuple(eio.decode_jpeg(jpeg, eio.ImageReadMode.GRAY).shape) == (1, 11, 14)


def test_write_png_and_jpeg(tmp_path):
    x = np.random.default_rng(4).integers(0, 256, (3, 9, 13), dtype=np.uint8)
    for c in (1, 3):
        eio.write_png(ember.from_numpy(x[:c].copy()), str(tmp_path / f"{c}.png"))
        written = tio.read_image(str(tmp_path / f"{c}.png"))
        np.testing.assert_array_equal(written.numpy(), x[:c])
    smooth = np.broadcast_to(np.arange(0, 208, 16, dtype=np.uint8), (3, 9, 13)).copy()
    smooth[1] //= 2
    encoded = eio.encode_jpeg(ember.from_numpy(smooth), quality=95)
    decoded = eio.decode_jpeg(encoded)
    np.testing.assert_array_equal(decoded.numpy(),
                                  tio.decode_jpeg(torch.from_numpy(encoded.numpy())).numpy())
    assert np.abs(decoded.numpy().astype(int) - smooth).max() <= 8
    with pytest.raises(ValueError, match="quality"):
        eio.encode_jpeg(ember.from_numpy(x), quality=0)
    with pytest.raises(RuntimeError, match="channels"):
        eio.encode_png(ember.from_numpy(np.zeros((2, 4, 4), np.uint8)))
    assert ev.io is eio


# --- FakeData ----------------------------------------------------------------------------------

def test_fake_data():
    data = ev.datasets.FakeData(size=5, image_size=(3, 12, 10), num_classes=4)
    assert len(data) == 5
    ember.manual_seed(7)
    before = ember.rand(3)
    ember.manual_seed(7)
    samples = [data[i] for i in range(5)]
    # The global generator is left alone.
    assert ember.equal(ember.rand(3), before)
    for img, target in samples:
        assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (10, 12)
        assert isinstance(target, int) and 0 <= target < 4
    again = ev.datasets.FakeData(size=5, image_size=(3, 12, 10), num_classes=4)
    for i in range(5):
        assert np.array_equal(np.array(again[i][0]), np.array(samples[i][0]))
        assert again[i][1] == samples[i][1]
    assert not np.array_equal(np.array(samples[0][0]), np.array(samples[1][0]))
    # The image of index i is ToPILImage of randn from a generator seeded with i + random_offset.
    g = ember.Generator()
    g.manual_seed(3)
    expected = ev.transforms.ToPILImage()(ember.randn(3, 12, 10, generator=g))
    assert np.array_equal(np.array(samples[3][0]), np.array(expected))
    shifted = ev.datasets.FakeData(size=5, image_size=(3, 12, 10), num_classes=4, random_offset=2)
    assert np.array_equal(np.array(shifted[1][0]), np.array(samples[3][0]))
    with pytest.raises(IndexError):
        data[5]
    gray = ev.datasets.FakeData(size=2, image_size=(1, 8, 6), transform=ev.transforms.ToTensor(),
                                target_transform=lambda t: t + 100)
    img, target = gray[0]
    assert tuple(img.shape) == (1, 8, 6) and 100 <= target < 110
    t = torchvision.datasets.FakeData(size=2, image_size=(1, 8, 6))
    assert t[0][0].mode == ev.datasets.FakeData(size=2, image_size=(1, 8, 6))[0][0].mode
