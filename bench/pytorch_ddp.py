#!/usr/bin/python3
"""PyTorch 1.13's DDP with ember train --nproc's recipe: LeNet-5 on Fashion-MNIST, Gloo, N
processes with one thread each, per-rank batch 32, SGD lr 0.01 momentum 0.9, one epoch.
Prints one JSON line like ember's. Usage: /usr/bin/python3 bench/pytorch_ddp.py [--nproc 2]"""
import argparse, json, os, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = "/usr/share/datasets/fashion-mnist"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_lenet import LeNet, load  # noqa: E402  ember train's model and data, as ember has them


def worker(rank, world, port):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    x, y = load(ROOT, "train")
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
        tx, ty = load(ROOT, "t10k")
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
