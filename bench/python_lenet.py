"""bench/pytorch_lenet.py's recipe in ember's Python API, line for line, for comparing a training
loop written in Python: the same LeNet-5 as a Python nn.Module subclass, Fashion-MNIST normalised
with (x/255 - 0.2860) / 0.3530, batch 64 of a shuffled permutation indexed from Python, SGD lr 0.01
momentum 0.9. Prints one JSON line like `ember train`.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/python_lenet.py [--threads N] [--epochs N]
"""
import argparse
import json
import time

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import FashionMNIST


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
        x = ember.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def load(root, train):
    # The dataset normalises as the PyTorch script does; its images as one (N, 1, 28, 28) tensor.
    ds = FashionMNIST(root, train=train)
    x = ((ds.data.float() / 255.0 - 0.2860) / 0.3530).unsqueeze(1)
    return x, ds.targets


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    ember.set_num_threads(a.threads)
    ember.manual_seed(a.seed)
    dev = ember.device(a.device)
    xtr, ytr = load(a.data, True)
    xte, yte = load(a.data, False)
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    model = LeNet().to(dev)
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    seconds = 0.0
    for _ in range(a.epochs):
        perm = ember.randperm(len(xtr), device=dev)
        if dev.type == "cuda":
            ember.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(0, len(xtr), 64):
            idx = perm[i:i + 64]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dev.type == "cuda":
            ember.cuda.synchronize()
        seconds += time.perf_counter() - t0
    with ember.no_grad():
        acc = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                  for i in range(0, len(xte), 1000)) / len(xte)
    print(json.dumps({"device": a.device, "epochs": a.epochs, "threads": a.threads,
                      "train_seconds": seconds, "samples_per_second": len(xtr) * a.epochs / seconds,
                      "test_accuracy": acc}))


if __name__ == "__main__":
    main()
