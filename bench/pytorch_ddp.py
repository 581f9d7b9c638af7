#!/usr/bin/python3
"""PyTorch 1.13's DDP with ember train --nproc's recipe: LeNet-5 on Fashion-MNIST, Gloo, N
processes with one thread each, per-rank batch 32, SGD lr 0.01 momentum 0.9, one epoch.
Prints one JSON line like ember's. Usage: /usr/bin/python3 bench/pytorch_ddp.py [--nproc 2]"""
import argparse, gzip, json, os, time
import numpy as np
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = "/usr/share/datasets/fashion-mnist"


def load(kind):
    with gzip.open(f"{ROOT}/{kind}-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{ROOT}/{kind}-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.tensor(x, dtype=torch.float32) / 255 - 0.2860) / 0.3530
    return x, torch.tensor(y, dtype=torch.int64)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def worker(rank, world, port):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    x, y = load("train")
    model = nn.parallel.DistributedDataParallel(LeNet())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sampler = torch.utils.data.DistributedSampler(range(len(x)), world, rank, shuffle=True, seed=0)
    idx = torch.tensor(list(sampler))
    start = time.perf_counter()
    for b in range(0, len(idx), 32):
        i = idx[b:b + 32]
        loss = F.cross_entropy(model(x[i]), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        tx, ty = load("t10k")
        with torch.no_grad():
            acc = (model.module(tx).argmax(1) == ty).float().mean().item()
        print(json.dumps({"framework": "pytorch", "nproc": world, "epoch_seconds": seconds,
                          "test_accuracy": acc}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--port", type=int, default=29777)
    a = p.parse_args()
    mp.spawn(worker, args=(a.nproc, a.port), nprocs=a.nproc)
