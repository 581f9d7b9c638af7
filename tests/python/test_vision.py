"""ember.vision against torchvision 0.14 (Debian's, over PyTorch 1.13) on the same inputs: datasets
read from files written here in their real formats (and Debian's Fashion-MNIST), transforms on PIL
images and tensors, make_grid / save_image, and resnet18."""
import gzip
import os
import pickle
import shutil
import struct

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as TT
import torchvision.transforms.functional as TF
from PIL import Image

import ember
import ember.vision as ev
import ember.vision.transforms as ET
import ember.vision.transforms.functional as EF


def as_np(x):
    """A tensor of either library, or a PIL image, as a NumPy array."""
    if isinstance(x, Image.Image):
        return np.array(x)
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, ember.Tensor):
        return x.detach().contiguous().numpy()
    return np.asarray(x)


def to_torch(x):
    return torch.from_numpy(np.array(as_np(x)))


def to_ember(x):
    return ember.from_numpy(np.array(as_np(x)))


def assert_same(e, t, atol=0.0):
    e, t = as_np(e), as_np(t)
    assert e.shape == t.shape and e.dtype == t.dtype, (e.shape, e.dtype, t.shape, t.dtype)
    if atol:
        np.testing.assert_allclose(e.astype(np.float64), t.astype(np.float64), rtol=0, atol=atol)
    else:
        np.testing.assert_array_equal(e, t)


def rgb_image(h=13, w=17, seed=0, mode="RGB"):
    rng = np.random.default_rng(seed)
    if mode == "L":
        return Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8), "L")
    return Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")


# --- datasets: MNIST-format files -------------------------------------------------------------

def write_idx(path, array, gz=False):
    array = np.asarray(array)
    code = {np.dtype(np.uint8): 0x08, np.dtype(np.int32): 0x0C}[array.dtype]
    raw = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    raw += array.astype(array.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(raw)
    return raw


def write_mnist(root, name="MNIST", gz=False, n_train=7, n_test=4, seed=0):
    rng = np.random.default_rng(seed)
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        ext = ".gz" if gz else ""
        write_idx(os.path.join(raw, f"{split}-images-idx3-ubyte{ext}"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), gz)
        write_idx(os.path.join(raw, f"{split}-labels-idx1-ubyte{ext}"),
                  rng.integers(0, 10, n, dtype=np.uint8), gz)
    return raw


@pytest.mark.parametrize("train", [True, False])
def test_mnist_reads_what_torchvision_reads(tmp_path, train):
    write_mnist(str(tmp_path))
    e = ev.datasets.MNIST(str(tmp_path), train=train)
    t = torchvision.datasets.MNIST(str(tmp_path), train=train)
    assert len(e) == len(t) == (7 if train else 4)
    assert e.data.dtype == ember.uint8 and e.targets.dtype == ember.int64
    assert_same(e.data, t.data)
    assert_same(e.targets, t.targets)
    assert e.classes == t.classes and e.class_to_idx == t.class_to_idx
    assert repr(e) == repr(t)
    for i in range(len(e)):
        (ei, el), (ti, tl) = e[i], t[i]
        assert isinstance(ei, Image.Image) and ei.mode == ti.mode == "L"
        assert_same(ei, ti)
        assert type(el) is int and el == tl
    e = ev.datasets.MNIST(str(tmp_path), train=train, transform=ET.ToTensor(),
                          target_transform=lambda y: y + 1)
    t = torchvision.datasets.MNIST(str(tmp_path), train=train, transform=TT.ToTensor(),
                                   target_transform=lambda y: y + 1)
    assert_same(e[-1][0], t[-1][0])
    assert e[-1][1] == t[-1][1]


def test_mnist_reads_gzipped_files(tmp_path):
    write_mnist(str(tmp_path / "plain"))
    write_mnist(str(tmp_path / "gz"), gz=True)
    plain, gz = ev.datasets.MNIST(str(tmp_path / "plain")), ev.datasets.MNIST(str(tmp_path / "gz"))
    assert_same(plain.data, gz.data)
    assert_same(plain.targets, gz.targets)


def test_mnist_batches_through_ember_dataloader(tmp_path):
    write_mnist(str(tmp_path))
    ds = ev.datasets.MNIST(str(tmp_path), transform=ET.ToTensor())
    x, y = next(iter(ember.utils.data.DataLoader(ds, batch_size=4)))
    assert tuple(x.shape) == (4, 1, 28, 28) and x.dtype == ember.float32
    assert y.tolist() == ds.targets[:4].tolist()


def test_idx_files_truncated_or_corrupt_give_clear_errors(tmp_path):
    from ember.vision.datasets.mnist import read_idx
    good = write_idx(str(tmp_path / "good"), np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    assert_same(read_idx(str(tmp_path / "good")), np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    ints = np.arange(-3, 3, dtype=np.int32).reshape(2, 3)
    write_idx(str(tmp_path / "ints.gz"), ints, gz=True)
    assert_same(read_idx(str(tmp_path / "ints.gz")), ints)
    cases = {
        "truncated": (good[:-5], "truncated IDX file"),
        "header": (good[:9], "truncated IDX header"),
        "extra": (good + b"\0", "more data"),
        "magic": (b"\x01" + good[1:], "not an IDX file"),
        "empty": (b"", "not an IDX file"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(RuntimeError, match=message):
            read_idx(str(tmp_path / name))
    (tmp_path / "cut.gz").write_bytes(gzip.compress(good)[:-12])
    with pytest.raises(RuntimeError, match="corrupt gzip"):
        read_idx(str(tmp_path / "cut.gz"))
    with pytest.raises(FileNotFoundError):
        read_idx(str(tmp_path / "absent"))
    # A labels file shorter than its images file.
    raw = write_mnist(str(tmp_path / "root"))
    write_idx(os.path.join(raw, "train-labels-idx1-ubyte"), np.zeros(3, np.uint8))
    with pytest.raises(RuntimeError, match="holds 7 images but .* holds 3 labels"):
        ev.datasets.MNIST(str(tmp_path / "root"))


def test_missing_files_with_download_say_what_to_put_where(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found") as e:
        ev.datasets.MNIST(str(tmp_path), download=True)
    message = str(e.value)
    assert os.path.join(str(tmp_path), "MNIST", "raw") in message and "no network" in message
    assert "train-images-idx3-ubyte" in message and "train-labels-idx1-ubyte" in message
    assert "http" in message
    with pytest.raises(RuntimeError, match="Dataset not found"):
        ev.datasets.MNIST(str(tmp_path), train=False)
    with pytest.raises(RuntimeError, match="no network") as e:
        ev.datasets.CIFAR10(str(tmp_path), download=True)
    message = str(e.value)
    assert "cifar-10-python.tar.gz" in message and "cifar-10-batches-py" in message
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        ev.datasets.CIFAR10(str(tmp_path))


FASHION = "/usr/share/datasets/fashion-mnist"


@pytest.mark.skipif(not os.path.isdir(FASHION), reason="needs Debian's dataset-fashion-mnist")
def test_fashion_mnist_falls_back_to_debian_files_as_torchvision_reads_them(tmp_path):
    raw = tmp_path / "tv" / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for name in os.listdir(FASHION):  # torchvision reads root/FashionMNIST/raw/*, unzipped
        if name.endswith("-ubyte.gz"):
            with gzip.open(os.path.join(FASHION, name)) as src, open(raw / name[:-3], "wb") as dst:
                shutil.copyfileobj(src, dst)
    for train in (False, True):
        e = ev.datasets.FashionMNIST(str(tmp_path / "empty"), train=train)
        t = torchvision.datasets.FashionMNIST(str(tmp_path / "tv"), train=train)
        assert len(e) == len(t) == (60000 if train else 10000)
        assert e.classes == t.classes and e.class_to_idx == t.class_to_idx
        for i in (0, -1):
            assert_same(e[i][0], t[i][0])
            assert e[i][1] == t[i][1]
        assert_same(e.targets, t.targets)
    # Files under root come first, and download=True finds the Debian ones.
    write_mnist(str(tmp_path / "own"), name="FashionMNIST")
    assert len(ev.datasets.FashionMNIST(str(tmp_path / "own"))) == 7
    test = ev.datasets.FashionMNIST(str(tmp_path / "empty"), train=False, download=True)
    assert len(test) == 10000


# --- datasets: CIFAR ---------------------------------------------------------------------------

def write_cifar(root, cifar100=False, seed=0):
    rng = np.random.default_rng(seed)
    folder = os.path.join(root, "cifar-100-python" if cifar100 else "cifar-10-batches-py")
    os.makedirs(folder)
    names = (["train", "test"] if cifar100 else
             [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"])
    for k, name in enumerate(names):
        n = 3 + k % 2
        entry = {"batch_label": f"batch {k}",
                 "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 "filenames": [f"img{k}_{i}.png" for i in range(n)]}
        labels = [int(v) for v in rng.integers(0, 100 if cifar100 else 10, n)]
        if cifar100:
            entry["fine_labels"], entry["coarse_labels"] = labels, [v // 5 for v in labels]
        else:
            entry["labels"] = labels
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(entry, f, protocol=2)
    meta = ({"fine_label_names": [f"fine{i}" for i in range(100)],
             "coarse_label_names": [f"coarse{i}" for i in range(20)]} if cifar100 else
            {"label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                             "horse", "ship", "truck"], "num_cases_per_batch": 10000,
             "num_vis": 3072})
    with open(os.path.join(folder, "meta" if cifar100 else "batches.meta"), "wb") as f:
        pickle.dump(meta, f, protocol=2)


@pytest.mark.parametrize("cifar100", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_cifar_reads_what_torchvision_reads(tmp_path, monkeypatch, cifar100, train):
    write_cifar(str(tmp_path), cifar100)
    # The files are made here, so their md5 sums are not the real ones torchvision checks.
    monkeypatch.setattr(torchvision.datasets.cifar, "check_integrity",
                        lambda fpath, md5=None: os.path.isfile(fpath))
    cls = "CIFAR100" if cifar100 else "CIFAR10"
    e = getattr(ev.datasets, cls)(str(tmp_path), train=train)
    t = getattr(torchvision.datasets, cls)(str(tmp_path), train=train)
    assert isinstance(e.data, np.ndarray) and e.data.shape == t.data.shape
    assert_same(e.data, t.data)
    assert e.targets == t.targets and e.classes == t.classes and e.class_to_idx == t.class_to_idx
    assert repr(e) == repr(t)
    for i in range(len(e)):
        (ei, el), (ti, tl) = e[i], t[i]
        assert ei.mode == ti.mode == "RGB" and el == tl
        assert_same(ei, ti)


def test_cifar_corrupt_batch_gives_clear_error(tmp_path):
    write_cifar(str(tmp_path))
    path = tmp_path / "cifar-10-batches-py" / "data_batch_2"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(RuntimeError, match="data_batch_2: corrupt CIFAR file"):
        ev.datasets.CIFAR10(str(tmp_path))


# --- datasets: image folders -------------------------------------------------------------------

def write_folder(root):
    files = {"cat/a.png": "L", "cat/b.jpg": "RGB", "dog/sub/c.png": "RGBA", "dog/d.JPEG": "RGB",
             "zebra/e.bmp": "RGB"}
    for k, (name, mode) in enumerate(files.items()):
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        img = rgb_image(9 + k, 11, seed=k).convert(mode)
        img.save(path)
    with open(os.path.join(root, "dog", "notes.txt"), "w") as f:
        f.write("not an image")


def test_image_folder_matches_torchvision(tmp_path):
    write_folder(str(tmp_path))
    e, t = ev.datasets.ImageFolder(str(tmp_path)), torchvision.datasets.ImageFolder(str(tmp_path))
    assert e.classes == t.classes == ["cat", "dog", "zebra"] and e.class_to_idx == t.class_to_idx
    assert e.samples == t.samples and e.imgs == t.imgs and e.targets == t.targets and len(e) == 5
    for i in range(len(e)):
        (ei, el), (ti, tl) = e[i], t[i]
        assert ei.mode == "RGB" and el == tl
        assert_same(ei, ti)
    valid = lambda p: p.endswith(".png")  # noqa: E731
    with pytest.raises(FileNotFoundError, match="zebra"):
        ev.datasets.ImageFolder(str(tmp_path), is_valid_file=valid)
    os.remove(os.path.join(str(tmp_path), "zebra", "e.bmp"))
    os.rmdir(os.path.join(str(tmp_path), "zebra"))
    e = ev.datasets.ImageFolder(str(tmp_path), is_valid_file=valid, loader=lambda p: p,
                                transform=len)
    t = torchvision.datasets.ImageFolder(str(tmp_path), is_valid_file=valid, loader=lambda p: p,
                                         transform=len)
    assert e.samples == t.samples and [e[i] for i in range(len(e))] == [t[i] for i in range(len(t))]
    with pytest.raises(FileNotFoundError, match="cat"):
        ev.datasets.DatasetFolder(str(tmp_path), loader=os.path.getsize, extensions=(".txt",))


def test_dataset_folder_arguments(tmp_path):
    write_folder(str(tmp_path))
    os.makedirs(str(tmp_path / "cat" / "x"))
    for ext in (".txt", ".png"):
        open(str(tmp_path / "cat" / ("n" + ext)), "w").close()
        open(str(tmp_path / "zebra" / ("n" + ext)), "w").close()
    e = ev.datasets.DatasetFolder(str(tmp_path), loader=os.path.getsize, extensions=(".txt",))
    t = torchvision.datasets.DatasetFolder(str(tmp_path), loader=os.path.getsize,
                                           extensions=(".txt",))
    assert e.samples == t.samples and e.extensions == (".txt",) and e[0] == t[0]
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        ev.datasets.DatasetFolder(str(tmp_path), loader=os.path.getsize)
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        ev.datasets.ImageFolder(str(tmp_path / "cat" / "x"))


# --- transforms --------------------------------------------------------------------------------

def test_interpolation_mode_is_torchvisions():
    assert [(m.name, m.value) for m in ET.InterpolationMode] == \
        [(m.name, m.value) for m in TT.InterpolationMode]


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "1", "F", "I", "LA"])
def test_to_tensor_and_pil_to_tensor(mode):
    img = rgb_image(5, 7).convert(mode)
    assert_same(EF.to_tensor(img), TF.to_tensor(img))
    if mode not in ("1",):
        assert_same(EF.pil_to_tensor(img), TF.pil_to_tensor(img))
    assert_same(ET.ToTensor()(img), TT.ToTensor()(img))


def test_to_tensor_of_arrays_and_to_pil_image():
    rng = np.random.default_rng(1)
    for a in (rng.integers(0, 256, (4, 6, 3), dtype=np.uint8), rng.random((4, 6), dtype=np.float32),
              rng.integers(0, 256, (4, 6, 1), dtype=np.uint8)):
        assert_same(EF.to_tensor(a), TF.to_tensor(a))
    x = rng.random((3, 4, 5), dtype=np.float32)
    u = (x * 255).astype(np.uint8)
    for e, t in ((ember.from_numpy(x), torch.from_numpy(x)),
                 (ember.from_numpy(x[:1]), torch.from_numpy(x[:1])),
                 (ember.from_numpy(u), torch.from_numpy(u))):
        ei, ti = EF.to_pil_image(e), TF.to_pil_image(t)
        assert ei.mode == ti.mode
        assert_same(ei, ti)
    ei, ti = ET.ToPILImage()(ember.from_numpy(x[:1])), TT.ToPILImage()(torch.from_numpy(x[:1]))
    assert_same(ei, ti)


def test_normalize():
    x = np.random.default_rng(2).random((2, 3, 5, 4), dtype=np.float32)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    e, t = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    assert_same(ET.Normalize(mean, std)(e), TT.Normalize(mean, std)(t))
    assert_same(e, x)  # not in place
    out = ET.Normalize(mean, std, inplace=True)(e)
    TT.Normalize(mean, std, inplace=True)(t)
    assert_same(e, t)
    assert_same(out, t)
    with pytest.raises(TypeError, match="float tensor"):
        EF.normalize(ember.zeros(3, 2, 2, dtype=ember.uint8), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        EF.normalize(ember.zeros(3, 2, 2), mean, [1.0, 0.0, 1.0])


@pytest.mark.parametrize("size", [8, (6, 21), [10], 30])
@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR", "BICUBIC", "LANCZOS", "BOX"])
def test_resize_pil_equals_torchvision(size, interpolation):
    img = rgb_image(13, 17)
    e = ET.Resize(size, getattr(ET.InterpolationMode, interpolation))(img)
    t = TT.Resize(size, getattr(TT.InterpolationMode, interpolation))(img)
    assert e.size == t.size
    assert_same(e, t)


def test_resize_max_size_and_errors():
    img = rgb_image(10, 30)
    assert_same(EF.resize(img, 8, max_size=12), TF.resize(img, 8, max_size=12))
    with pytest.raises(ValueError, match="max_size"):
        EF.resize(img, [8, 8], max_size=12)
    with pytest.raises(TypeError, match="InterpolationMode"):
        EF.resize(img, 8, interpolation="bilinear")
    assert repr(ET.Resize(8)) == repr(TT.Resize(8))


@pytest.mark.parametrize("size", [(7, 9), (26, 40), (13, 5), [11]])
@pytest.mark.parametrize("interpolation,antialias", [("NEAREST", False), ("BILINEAR", False),
                                                     ("BICUBIC", False), ("BILINEAR", True),
                                                     ("BICUBIC", True)])
def test_resize_tensor_close_to_torchvision(size, interpolation, antialias):
    x = np.random.default_rng(3).random((2, 3, 13, 17), dtype=np.float32)
    kw = dict(interpolation=getattr(TT.InterpolationMode, interpolation), antialias=antialias)
    t = TF.resize(torch.from_numpy(x), size, **kw)
    kw["interpolation"] = getattr(ET.InterpolationMode, interpolation)
    exact = interpolation == "NEAREST"
    assert_same(EF.resize(ember.from_numpy(x), size, **kw), t, atol=0 if exact else 1e-5)
    assert_same(EF.resize(ember.from_numpy(x[0]), size, **kw), t[0],  # (C, H, W)
                atol=0 if exact else 1e-5)
    u = (x * 255).astype(np.uint8)
    tu = TF.resize(torch.from_numpy(u), size, **dict(kw, interpolation=getattr(
        TT.InterpolationMode, interpolation)))
    # A sum that lands near k + 0.5 may round the other way.
    assert_same(EF.resize(ember.from_numpy(u), size, **kw), tu, atol=0 if exact else 1)


def test_resize_tensor_nearest_reads_torchs_pixels():
    x = np.arange(40 * 40, dtype=np.float32).reshape(1, 40, 40)
    for n_in, n_out in ((26, 22), (6, 74), (21, 69), (39, 33), (13, 26), (17, 17), (40, 3)):
        e = EF.resize(ember.from_numpy(x[:, :n_in, :n_in].copy()), [n_out, n_out],
                      ET.InterpolationMode.NEAREST)
        t = TF.resize(torch.from_numpy(x[:, :n_in, :n_in].copy()), [n_out, n_out],
                      TT.InterpolationMode.NEAREST)
        assert_same(e, t)


def test_resize_tensor_modes_ember_lacks():
    with pytest.raises(NotImplementedError, match="lanczos"):
        EF.resize(ember.rand(3, 4, 4), [2, 2], ET.InterpolationMode.LANCZOS)
    with pytest.raises(ValueError, match="Antialias"):
        EF.resize(ember.rand(3, 4, 4), [2, 2], ET.InterpolationMode.NEAREST, antialias=True)


def both(img):
    """img as a PIL image and as the (C, H, W) uint8 tensors of each library."""
    return img, to_ember(TF.pil_to_tensor(img)), TF.pil_to_tensor(img)


@pytest.mark.parametrize("size", [5, (4, 9), (13, 17), (20, 11), (16, 24)])
def test_center_crop(size):
    img, e, t = both(rgb_image(13, 17))
    assert_same(ET.CenterCrop(size)(img), TT.CenterCrop(size)(img))
    assert_same(ET.CenterCrop(size)(e), TT.CenterCrop(size)(t))
    assert repr(ET.CenterCrop(size)) == repr(TT.CenterCrop(size))


def test_crop_pad_five_ten_crop():
    img, e, t = both(rgb_image(13, 17))
    for box in ((2, 3, 5, 6), (-2, -3, 8, 9), (10, 12, 6, 9)):
        assert_same(EF.crop(img, *box), TF.crop(img, *box))
        assert_same(EF.crop(e, *box), TF.crop(t, *box))
    for padding in (2, [1, 3], (1, 2, 3, 4), [-1, 2, 0, -3]):
        for mode in ("constant", "edge", "reflect", "symmetric"):
            fill = 7 if mode == "constant" else 0
            assert_same(ET.Pad(padding, fill, mode)(img), TT.Pad(padding, fill, mode)(img))
            assert_same(EF.pad(e, padding, fill, mode), TF.pad(t, padding, fill, mode))
            ef = EF.pad(e.float() / 255, padding, 0.5, mode)
            assert_same(ef, TF.pad(t.float() / 255, padding, 0.5, mode))
    assert_same(EF.pad(img, 2, fill=(1, 2, 3)), TF.pad(img, 2, fill=(1, 2, 3)))
    for e_crops, t_crops in ((EF.five_crop(img, 6), TF.five_crop(img, 6)),
                             (EF.ten_crop(e, (5, 7)), TF.ten_crop(t, (5, 7))),
                             (ET.TenCrop(4, vertical_flip=True)(img),
                              TT.TenCrop(4, vertical_flip=True)(img))):
        assert len(e_crops) == len(t_crops)
        for a, b in zip(e_crops, t_crops):
            assert_same(a, b)


def test_flips():
    img, e, t = both(rgb_image(5, 7))
    f = e.float()[None]  # (1, C, H, W) float
    for ef, tf in ((EF.hflip, TF.hflip), (EF.vflip, TF.vflip)):
        assert_same(ef(img), tf(img))
        assert_same(ef(e), tf(t))
        assert_same(ef(f), tf(t.float()[None]))
    for E, T in ((ET.RandomHorizontalFlip, TT.RandomHorizontalFlip),
                 (ET.RandomVerticalFlip, TT.RandomVerticalFlip)):
        assert_same(E(p=1.0)(img), T(p=1.0)(img))
        assert_same(E(p=1.0)(e), T(p=1.0)(t))
        assert E(p=0.0)(img) is img and E(p=0.0)(e) is e
        assert repr(E(0.3)) == repr(T(0.3))


def run_seeded(transform, img, seed, n=8):
    ember.manual_seed(seed)
    return [as_np(transform(img)) for _ in range(n)]


def test_random_flips_repeat_under_manual_seed():
    img = rgb_image(5, 7)
    flip = ET.RandomHorizontalFlip()
    a, b = run_seeded(flip, img, 0, 32), run_seeded(flip, img, 0, 32)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    flipped = [np.array_equal(x, np.array(TF.hflip(img))) for x in a]
    assert all(f or np.array_equal(x, np.array(img)) for f, x in zip(flipped, a))
    assert 0 < sum(flipped) < 32  # p=0.5 both ways, in 32 draws


def test_random_crop():
    img, e, t = both(rgb_image(13, 17))
    for kw in (dict(size=8), dict(size=(5, 17)), dict(size=(16, 20), padding=2, fill=9),
               dict(size=20, pad_if_needed=True, fill=3), dict(size=15, padding=(1, 2),
                                                               padding_mode="reflect")):
        crop = ET.RandomCrop(**kw)
        a, b = run_seeded(crop, img, 7), run_seeded(crop, img, 7)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
        # Each crop is torchvision's crop at the place ember's generator chose.
        padded = TT.Pad(kw["padding"], kw.get("fill", 0), kw.get("padding_mode", "constant"))(img) \
            if "padding" in kw else img
        if kw.get("pad_if_needed"):
            padded = TF.pad(padded, [20 - 17, 20 - 13], fill=kw["fill"])
        ember.manual_seed(7)
        for x in a:
            i, j, h, w = ET.RandomCrop.get_params(padded, crop.size)
            assert_same(x, TF.crop(padded, i, j, h, w))
        ember.manual_seed(7)
        tensor_crops = [as_np(crop(e)) for _ in range(8)]
        assert all(np.array_equal(x, y.transpose(1, 2, 0)) for x, y in zip(a, tensor_crops))
    assert repr(ET.RandomCrop(8, padding=2)) == repr(TT.RandomCrop(8, padding=2))
    with pytest.raises(ValueError, match="larger than input image size"):
        ET.RandomCrop(30)(img)


def test_random_resized_crop():
    img, e, t = both(rgb_image(30, 40))
    rrc = ET.RandomResizedCrop(12)
    a, b = run_seeded(rrc, img, 3), run_seeded(rrc, img, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and a[0].shape == (12, 12, 3)
    assert not all(np.array_equal(a[0], x) for x in a[1:])
    ember.manual_seed(3)
    for x in a:
        i, j, h, w = ET.RandomResizedCrop.get_params(img, rrc.scale, rrc.ratio)
        assert 0 < h <= 30 and 0 < w <= 40
        assert_same(x, TF.resized_crop(img, i, j, h, w, [12, 12]))
    ember.manual_seed(3)
    i, j, h, w = ET.RandomResizedCrop.get_params(e, rrc.scale, rrc.ratio)
    ember.manual_seed(3)
    assert_same(rrc(e.float()), TF.resized_crop(t.float(), i, j, h, w, [12, 12]), atol=1e-3)
    assert repr(ET.RandomResizedCrop(12)) == repr(TT.RandomResizedCrop(12))


def test_grayscale_and_convert_image_dtype():
    img, e, t = both(rgb_image(6, 5))
    for n in (1, 3):
        assert_same(ET.Grayscale(n)(img), TT.Grayscale(n)(img))
        assert_same(ET.Grayscale(n)(e), TT.Grayscale(n)(t))
        assert_same(ET.Grayscale(n)(e.float() / 255), TT.Grayscale(n)(t.float() / 255))
    for src, dst in ((ember.uint8, torch.uint8), (ember.float32, torch.float32),
                     (ember.float64, torch.float64), (ember.int32, torch.int32),
                     (ember.int64, torch.int64)):
        for to_e, to_t in ((ember.uint8, torch.uint8), (ember.float32, torch.float32),
                           (ember.int32, torch.int32), (ember.float64, torch.float64)):
            es, ts = EF.convert_image_dtype(e, src), TF.convert_image_dtype(t, dst)
            unsafe = src == ember.float32 or (src == ember.float64 and to_e == ember.int64)
            if unsafe and to_e in (ember.int32, ember.int64):
                with pytest.raises(RuntimeError, match="cannot be performed safely"):
                    ET.ConvertImageDtype(to_e)(es)
                continue
            assert_same(ET.ConvertImageDtype(to_e)(es), TT.ConvertImageDtype(to_t)(ts))


def test_compose_lambda_and_reprs():
    mean, std = (0.5, 0.5, 0.5), (0.25, 0.25, 0.25)
    e = ET.Compose([ET.Resize(9), ET.CenterCrop(8), ET.RandomHorizontalFlip(0.0), ET.ToTensor(),
                    ET.Normalize(mean, std), ET.Lambda(lambda x: x * 2)])
    t = TT.Compose([TT.Resize(9), TT.CenterCrop(8), TT.RandomHorizontalFlip(0.0), TT.ToTensor(),
                    TT.Normalize(mean, std), TT.Lambda(lambda x: x * 2)])
    img = rgb_image(13, 17)
    assert_same(e(img), t(img), atol=1e-6)
    assert repr(e) == repr(t)
    with pytest.raises(TypeError, match="callable"):
        ET.Lambda(3)


# --- utils -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, dict(nrow=2), dict(nrow=3, padding=1, pad_value=0.5),
                                dict(normalize=True), dict(normalize=True, value_range=(0.2, 0.7)),
                                dict(normalize=True, scale_each=True, padding=0)])
def test_make_grid_equals_torchvision(kw):
    x = np.random.default_rng(4).normal(size=(5, 3, 6, 7)).astype(np.float32)
    assert_same(ev.utils.make_grid(ember.from_numpy(x), **kw),
                torchvision.utils.make_grid(torch.from_numpy(x), **kw), atol=1e-6)
    g = ember.from_numpy(x[:, :1])  # 1-channel images become RGB
    assert_same(ev.utils.make_grid(g, **kw),
                torchvision.utils.make_grid(torch.from_numpy(x[:, :1]), **kw), atol=1e-6)
    as_list = [ember.from_numpy(x[i]) for i in range(4)]
    assert_same(ev.utils.make_grid(as_list, **kw),
                torchvision.utils.make_grid([torch.from_numpy(x[i]) for i in range(4)], **kw),
                atol=1e-6)
    for one in (x[0], x[0, 0], x[:1]):  # single images come back as they are (RGB)
        assert_same(ev.utils.make_grid(ember.from_numpy(one), **kw),
                    torchvision.utils.make_grid(torch.from_numpy(one), **kw), atol=1e-6)
    assert_same(ember.from_numpy(x), x)  # normalize left the input alone


def test_save_image_writes_what_torchvision_writes(tmp_path):
    x = np.random.default_rng(5).random((6, 3, 8, 9), dtype=np.float32)
    for i, kw in enumerate([{}, dict(nrow=4, padding=1), dict(normalize=True)]):
        ev.utils.save_image(ember.from_numpy(x), str(tmp_path / f"e{i}.png"), **kw)
        torchvision.utils.save_image(torch.from_numpy(x), str(tmp_path / f"t{i}.png"), **kw)
        e, t = Image.open(tmp_path / f"e{i}.png"), Image.open(tmp_path / f"t{i}.png")
        assert e.mode == t.mode == "RGB"
        assert_same(e, t)
    ev.utils.save_image(ember.from_numpy(x[0]), str(tmp_path / "one.jpg"))
    assert Image.open(tmp_path / "one.jpg").size == (9, 8)


# --- models ------------------------------------------------------------------------------------

def test_resnet18_is_torchvisions_network(tmp_path):
    e, t = ev.models.resnet18(), torchvision.models.resnet18()
    esd, tsd = e.state_dict(), t.state_dict()
    assert list(esd) == list(tsd)
    assert all(tuple(esd[k].shape) == tuple(tsd[k].shape) for k in esd)
    # torchvision's (random) weights, through a safetensors file, give torchvision's outputs.
    ember.save({k: ember.from_numpy(v.numpy().copy()) for k, v in tsd.items()},
               str(tmp_path / "w.safetensors"))
    e = ev.models.resnet18(weights=str(tmp_path / "w.safetensors"))
    e.eval()
    t.eval()
    x = np.random.default_rng(6).random((2, 3, 40, 40), dtype=np.float32)
    with torch.no_grad():
        expected = t(torch.from_numpy(x))
    assert_same(e(ember.from_numpy(x)), expected, atol=1e-4)
    assert tuple(ev.models.resnet18(num_classes=10).state_dict()["fc.weight"].shape) == (10, 512)


def test_resnet18_pretrained_weights_need_a_local_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match="no network") as e:
        ev.models.resnet18(weights=ev.models.ResNet18_Weights.DEFAULT)
    assert "resnet18-f37072fd" in str(e.value) and str(tmp_path) in str(e.value)
    with pytest.warns(UserWarning, match="pretrained"):
        with pytest.raises(RuntimeError, match="no network"):
            ev.models.resnet18(pretrained=True)
    with pytest.warns(UserWarning, match="pretrained"):
        assert ev.models.resnet18(pretrained=False) is not None
    with pytest.raises(RuntimeError, match="no network"):
        ev.models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(ValueError, match="num_classes"):
        ev.models.resnet18(weights="DEFAULT", num_classes=10)
    default = torchvision.models.ResNet18_Weights.DEFAULT
    assert repr(ev.models.ResNet18_Weights.DEFAULT) == repr(default)
    assert ev.models.ResNet18_Weights.DEFAULT.url == torchvision.models.ResNet18_Weights.DEFAULT.url
    # In the hub cache, the weights load.
    model = ev.models.resnet18()
    path = ev.models.ResNet18_Weights.DEFAULT.local_path()
    assert path.startswith(str(tmp_path))
    os.makedirs(os.path.dirname(path))
    ember.save(model, path)
    loaded = ev.models.resnet18(weights=ev.models.ResNet18_Weights.DEFAULT).state_dict()
    assert all(ember.equal(v, loaded[k]) for k, v in model.state_dict().items())


def test_resnet18_zero_init_residual_and_unsupported_options():
    model = ev.models.resnet18(zero_init_residual=True)
    bn2 = [v for k, v in model.state_dict().items() if k.endswith("bn2.weight")]
    assert len(bn2) == 8 and all(float(v.abs().sum()) == 0 for v in bn2)
    with pytest.raises(NotImplementedError, match="groups"):
        ev.models.resnet18(groups=2)


def test_package_names():
    assert ev.__version__ == "0.14.1"
    for module in ("datasets", "transforms", "utils", "models"):
        assert hasattr(ev, module)
    assert ev.get_image_backend() == torchvision.get_image_backend() == "PIL"
