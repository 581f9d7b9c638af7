"""MNIST, Fashion-MNIST and Kuzushiji-MNIST from their IDX files, in torchvision 0.14's layout:
root/<ClassName>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte, gzipped or not.

There is no network to download from: download=True finds the files where torchvision would put
them, or says which to put there. FashionMNIST also reads Debian's dataset-fashion-mnist.
"""
import gzip
import os
import struct
import warnings
import zlib

import numpy as np
from PIL import Image

from ... import from_numpy, int64
from .vision import VisionDataset

DEBIAN_FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"

# The IDX element types: the third magic byte -> the big-endian NumPy type.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _open(path):
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def _read_exactly(f, n):
    """Up to n bytes of f (fewer only at the end of the data), as a writable uint8 array."""
    buf = np.empty(n, np.uint8)
    view, got = memoryview(buf), 0
    while got < n:
        k = f.readinto(view[got:])
        if not k:
            break
        got += k
    return buf[:got]


def read_idx(path):
    """The NumPy array (native byte order) an IDX file holds, gzipped or not."""
    try:
        with _open(path) as f:
            magic = f.read(4)
            if len(magic) < 4 or magic[0] or magic[1] or magic[2] not in _IDX_TYPES:
                raise RuntimeError(f"{path}: not an IDX file (expected the magic bytes 00 00 "
                                   f"<type 08-0e> <ndim>, got {magic.hex(' ') or 'an empty file'})")
            ndim = magic[3]
            dims = f.read(4 * ndim)
            if len(dims) < 4 * ndim:
                raise RuntimeError(f"{path}: truncated IDX header ({ndim} dims announced, "
                                   f"{len(dims)} of their {4 * ndim} bytes present)")
            shape = struct.unpack(f">{ndim}I", dims)
            dtype = np.dtype(_IDX_TYPES[magic[2]])
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            data = _read_exactly(f, nbytes)
            if data.size < nbytes:
                raise RuntimeError(f"{path}: truncated IDX file: its header announces shape "
                                   f"{tuple(shape)} ({nbytes} bytes of data), it holds "
                                   f"{data.size} bytes")
            if f.read(1):
                raise RuntimeError(f"{path}: corrupt IDX file: more data than the "
                                   f"{nbytes} bytes its header's shape {tuple(shape)} announces")
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as e:  # gzip's errors for damaged streams
        raise RuntimeError(f"{path}: corrupt gzip file ({e})") from e
    array = data.view(dtype).reshape(shape)
    return array if dtype.itemsize == 1 else array.astype(dtype.newbyteorder("="))


def read_sn3_pascalvincent_tensor(path, strict=True):
    """An IDX ("SN3 Pascal Vincent") file as an ember tensor sharing the array's memory."""
    return from_numpy(read_idx(path))


def read_label_file(path):
    """A labels file (1-D uint8) as an int64 tensor."""
    x = read_idx(path)
    if x.dtype != np.uint8:
        raise TypeError(f"{path}: x should be of dtype uint8 instead of {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"{path}: x should have 1 dimension instead of {x.ndim}")
    return from_numpy(x).to(int64)


def read_image_file(path):
    """An images file (N, H, W) uint8 as a uint8 tensor."""
    x = read_idx(path)
    if x.dtype != np.uint8:
        raise TypeError(f"{path}: x should be of dtype uint8 instead of {x.dtype}")
    if x.ndim != 3:
        raise ValueError(f"{path}: x should have 3 dimension instead of {x.ndim}")
    return from_numpy(x)


class MNIST(VisionDataset):
    """The MNIST digits: (PIL image of mode "L", int label) pairs from the IDX files in
    root/MNIST/raw."""

    mirrors = [
        "http://yann.lecun.com/exdb/mnist/",
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
    ]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. " + self._where_to_put_files())
        self.data, self.targets = self._load_data()

    @property
    def train_labels(self):
        warnings.warn("train_labels has been renamed targets")
        return self.targets

    @property
    def test_labels(self):
        warnings.warn("test_labels has been renamed targets")
        return self.targets

    @property
    def train_data(self):
        warnings.warn("train_data has been renamed data")
        return self.data

    @property
    def test_data(self):
        warnings.warn("test_data has been renamed data")
        return self.data

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {_class: i for i, _class in enumerate(self.classes)}

    def _split_files(self):
        split = "train" if self.train else "t10k"
        return [f"{split}-images-idx3-ubyte", f"{split}-labels-idx1-ubyte"]

    def _folders(self):
        """Where the raw files are looked for, in order."""
        return [self.raw_folder]

    def _find_files(self):
        """The (images, labels) paths of this split, both from one folder, or None."""
        for folder in self._folders():
            paths = []
            for name in self._split_files():
                found = [p for p in (os.path.join(folder, name), os.path.join(folder, name + ".gz"))
                         if os.path.isfile(p)]
                if not found:
                    break
                paths.append(found[0])
            else:
                return paths
        return None

    def _check_exists(self):
        return self._find_files() is not None

    def _where_to_put_files(self):
        names = self._split_files()
        urls = ", ".join(self.mirrors[0] + n + ".gz" for n in names)
        return (f"{self.__class__.__name__} needs {' and '.join(names)} (gzipped or not, .gz "
                f"added) in {self.raw_folder}. This machine cannot download them: fetch them "
                f"elsewhere ({urls}) and copy them there.")

    def _load_data(self):
        image_path, label_path = self._find_files()
        data, targets = read_image_file(image_path), read_label_file(label_path)
        if len(data) != len(targets):
            raise RuntimeError(f"{image_path} holds {len(data)} images but {label_path} holds "
                               f"{len(targets)} labels")
        return data, targets

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")  # a PIL image, as every other dataset's
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def download(self):
        """Finds the files (no network here): raises RuntimeError saying where to put them."""
        if self._check_exists():
            return
        raise RuntimeError("Dataset not found and download=True cannot fetch it (no network). "
                           + self._where_to_put_files())

    def extra_repr(self):
        split = "Train" if self.train is True else "Test"
        return f"Split: {split}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST from root/FashionMNIST/raw, else from Debian's
    dataset-fashion-mnist (/usr/share/datasets/fashion-mnist)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
               "Bag", "Ankle boot"]

    def _folders(self):
        return [self.raw_folder, DEBIAN_FASHION_MNIST_DIR]

    def _where_to_put_files(self):
        return (super()._where_to_put_files() + " On Debian, `apt install dataset-fashion-mnist` "
                f"puts them in {DEBIAN_FASHION_MNIST_DIR}, which is read too.")


class KMNIST(MNIST):
    """Kuzushiji-MNIST (cursive Japanese characters) from root/KMNIST/raw."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
