#!/usr/bin/python3
"""PyTorch 1.13's DDP (Gloo, 2 processes) on the data ddp_test.cpp writes: Linear(4,16) ReLU
Linear(16,3) in float64, SGD lr 0.1 momentum 0.9, MSE, each rank on its slice of every batch.
Usage: torch_ddp_oracle.py DIR STEPS PORT; reads DIR/p{i}.npy, x{s}.npy, y{s}.npy, writes
DIR/out{i}.npy (rank 0's parameters at the end)."""
import os, sys
import numpy as np
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp


def worker(rank, world, d, steps, port):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.from_numpy(np.load(f"{d}/p{i}.npy")))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    for s in range(steps):
        x = torch.from_numpy(np.load(f"{d}/x{s}.npy"))
        y = torch.from_numpy(np.load(f"{d}/y{s}.npy"))
        per = x.shape[0] // world
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x[rank * per:(rank + 1) * per]),
                               y[rank * per:(rank + 1) * per]).backward()
        opt.step()
    if rank == 0:
        for i, p in enumerate(model.parameters()):
            np.save(f"{d}/out{i}.npy", p.detach().numpy())
    dist.destroy_process_group()


if __name__ == "__main__":
    d, steps, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    mp.spawn(worker, args=(2, d, steps, port), nprocs=2)
