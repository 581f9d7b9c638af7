"""PyTorch's Hogwild recipe on the `ember train` workload, to compare with `ember train --hogwild N`.

The same LeNet-5, data, normalisation, batch 64 and SGD (lr 0.01, momentum 0.9) as
bench/pytorch_lenet.py; model.share_memory(), then N processes started with the spawn method, each
with 1 thread (torch.set_num_threads), its own optimizer and every N-th training example
(shuffled), as in the mnist_hogwild example. Time is from starting the processes to joining them.
Prints one JSON line like `ember train`.

  /usr/bin/python3 bench/pytorch_hogwild.py [--procs N] [--threads N] [--epochs N] [--seed N]
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_lenet import LeNet, load  # noqa: E402


def worker(rank, procs, threads, epochs, seed, model, xtr, ytr):
    torch.set_num_threads(threads)
    torch.manual_seed(seed + rank)
    x, y = xtr[rank::procs], ytr[rank::procs]
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(epochs):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), 64):
            idx = perm[i:i + 64]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    model = LeNet()
    model.share_memory()
    xtr.share_memory_()
    ytr.share_memory_()
    t0 = time.perf_counter()
    mp.spawn(worker, args=(a.procs, a.threads, a.epochs, a.seed, model, xtr, ytr), nprocs=a.procs,
             join=True, start_method="spawn")
    seconds = time.perf_counter() - t0
    with torch.no_grad():
        acc = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                  for i in range(0, len(xte), 1000)) / len(xte)
    print(json.dumps({"device": "cpu", "hogwild": a.procs, "threads_per_process": a.threads,
                      "epochs": a.epochs, "train_seconds": seconds,
                      "samples_per_second": len(xtr) * a.epochs / seconds, "test_accuracy": acc}))


if __name__ == "__main__":
    main()
