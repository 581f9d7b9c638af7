"""CIFAR-10 and CIFAR-100 from their Python pickles (root/cifar-10-batches-py/data_batch_1, ...).

There is no network to download from: download=True extracts the archive if it is already in root
(as torchvision does with a downloaded file), or says what to put where.
"""
import os
import pickle
import tarfile

import numpy as np
from PIL import Image

from .vision import VisionDataset


def _check_members(tar, archive):
    """Refuses an archive with links or with names that would land outside its folder (Python
    3.11.2's tarfile has no extraction filter)."""
    for m in tar.getmembers():
        if not (m.isfile() or m.isdir()) or os.path.isabs(m.name) or ".." in m.name.split("/"):
            raise RuntimeError(f"{archive}: unexpected member {m.name!r}; extract it by hand")


class CIFAR10(VisionDataset):
    """CIFAR-10: (PIL image of mode "RGB", int label) pairs; `data` is the (N, 32, 32, 3) uint8
    NumPy array, `targets` a list of ints."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [
        ["test_batch", "40351d587109b95175f43aff81a1287e"],
    ]
    meta = {
        "filename": "batches.meta",
        "key": "label_names",
        "md5": "5ff9c542aee3614f3951f8cda6e48888",
    }

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. " + self._where_to_put_files())
        data, self.targets = [], []
        for file_name, _ in self.train_list if self.train else self.test_list:
            entry = self._unpickle(file_name)
            labels = entry.get("labels", entry.get("fine_labels"))
            if "data" not in entry or labels is None:
                raise RuntimeError(f"{self._path(file_name)}: corrupt CIFAR batch (expected the "
                                   f"keys 'data' and 'labels' or 'fine_labels', got {list(entry)})")
            batch = np.asarray(entry["data"])
            if batch.dtype != np.uint8 or batch.ndim != 2 or batch.shape[1] != 3 * 32 * 32 \
                    or len(batch) != len(labels):
                raise RuntimeError(f"{self._path(file_name)}: corrupt CIFAR batch (expected "
                                   f"{len(labels)} rows of 3072 uint8, got {batch.shape} "
                                   f"{batch.dtype})")
            data.append(batch)
            self.targets.extend(labels)
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))  # HWC
        self._load_meta()

    def _path(self, file_name):
        return os.path.join(self.root, self.base_folder, file_name)

    def _unpickle(self, file_name):
        path = self._path(file_name)
        try:
            with open(path, "rb") as f:
                entry = pickle.load(f, encoding="latin1")
        except (pickle.UnpicklingError, EOFError, ValueError) as e:
            raise RuntimeError(f"{path}: corrupt CIFAR file ({e})") from e
        if not isinstance(entry, dict):
            raise RuntimeError(f"{path}: corrupt CIFAR file (expected a dict, got "
                               f"{type(entry).__name__})")
        return entry

    def _load_meta(self):
        entry = self._unpickle(self.meta["filename"])
        if self.meta["key"] not in entry:
            raise RuntimeError(f"{self._path(self.meta['filename'])}: no {self.meta['key']!r}")
        self.classes = entry[self.meta["key"]]
        self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        img = Image.fromarray(img)  # a PIL image, as every other dataset's
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def _check_integrity(self):
        # Every file present; their contents are checked as they are read (hashing 180 MB at every
        # construction, as torchvision does, would also turn away a hand-made subset).
        names = [n for n, _ in self.train_list + self.test_list] + [self.meta["filename"]]
        return all(os.path.isfile(self._path(n)) for n in names)

    def _where_to_put_files(self):
        names = [n for n, _ in self.train_list + self.test_list] + [self.meta["filename"]]
        return (f"{self.__class__.__name__} needs {', '.join(names)} in "
                f"{os.path.join(self.root, self.base_folder)}. This machine cannot download "
                f"them: fetch {self.url} elsewhere and put it in {self.root} (download=True "
                "extracts it), or extract it there yourself.")

    def download(self):
        """Extracts root/<filename> if it is there (no network here); otherwise raises a
        RuntimeError that says what to put where."""
        if self._check_integrity():
            print("Files already downloaded and verified")
            return
        archive = os.path.join(self.root, self.filename)
        if not os.path.isfile(archive):
            raise RuntimeError("Dataset not found and download=True cannot fetch it (no "
                               "network). " + self._where_to_put_files())
        with tarfile.open(archive, "r:gz") as tar:
            _check_members(tar, archive)
            tar.extractall(self.root)

    def extra_repr(self):
        split = "Train" if self.train is True else "Test"
        return f"Split: {split}"


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels) from root/cifar-100-python."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [
        ["train", "16019d7e3df5f24257cddd939b257f8d"],
    ]
    test_list = [
        ["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"],
    ]
    meta = {
        "filename": "meta",
        "key": "fine_label_names",
        "md5": "7973b15100ade9c7d40fb424638fde48",
    }
