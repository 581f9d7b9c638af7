"""The `ember train` recipe in PyTorch, for comparing accuracy and epoch time in the same run.

LeNet-5 (conv1 6@5x5, pool 2, conv2 16@5x5, pool 2, fc1 256-120, fc2 120-84, fc3 84-10, ReLU),
Fashion-MNIST normalised with (x/255 - 0.2860) / 0.3530, batch 64, shuffled, SGD lr 0.01 momentum 0.9.
Run with /usr/bin/python3 (Debian's python3-torch). Prints one JSON line like `ember train`.

  /usr/bin/python3 bench/pytorch_lenet.py [--threads N] [--epochs N] [--seed N] [--save FILE]
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype == 8, path
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(root, split):
    def find(stem):
        for name in (stem + ".gz", stem):
            if os.path.exists(os.path.join(root, name)):
                return os.path.join(root, name)
        raise FileNotFoundError(stem)
    images = read_idx(find(split + "-images-idx3-ubyte")).astype(np.float32)
    labels = read_idx(find(split + "-labels-idx1-ubyte")).astype(np.int64)
    x = (torch.from_numpy(images) / 255.0 - 0.2860) / 0.3530
    return x.unsqueeze(1), torch.from_numpy(labels)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(256, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default="")
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    # The same arithmetic as ember's float32 convolutions: PyTorch's cuDNN would use TF32 by default.
    torch.backends.cudnn.allow_tf32 = False
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    model = LeNet().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    seconds = 0.0
    for _ in range(a.epochs):
        perm = torch.randperm(len(xtr), device=dev)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(0, len(xtr), 64):
            idx = perm[i:i + 64]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        seconds += time.perf_counter() - t0
    with torch.no_grad():
        acc = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                  for i in range(0, len(xte), 1000)) / len(xte)
    if a.save:
        save_safetensors(a.save, model.state_dict())
    print(json.dumps({"device": a.device, "epochs": a.epochs, "threads": a.threads, "train_seconds": seconds,
                      "samples_per_second": len(xtr) * a.epochs / seconds, "test_accuracy": acc}))


def save_safetensors(path, state):
    """safetensors with json and struct (the safetensors package is not in Debian): int64 tensors
    (batch norm's num_batches_tracked) as I64, the rest as F32."""
    header, blobs, offset = {}, [], 0
    for name, t in sorted(state.items()):
        kind, code = ("<i8", "I64") if t.dtype == torch.int64 else ("<f4", "F32")
        b = t.detach().cpu().contiguous().numpy().astype(kind).tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


if __name__ == "__main__":
    main()
