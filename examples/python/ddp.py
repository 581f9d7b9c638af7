"""DistributedDataParallel on one node: mp.spawn starts the ranks, each joins the group over
tcp:// and trains its shard of the batch; the gradients are averaged while backward runs.
Also runs under `ember launch --nproc-per-node 2 python3 ddp.py` (env://) or torchrun."""
import argparse
import os
import socket

import ember
import ember.distributed as dist
import ember.multiprocessing as mp
from ember import nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run(rank, world, port, steps):
    init = "env://" if "RANK" in os.environ else f"tcp://127.0.0.1:{port}"
    dist.init_process_group("gloo", init_method=init, world_size=world, rank=rank)
    ember.manual_seed(0)
    x, y = ember.randn(64, 10), ember.randint(0, 2, (64,))
    ember.manual_seed(rank)  # DDP broadcasts rank 0's initial weights to every rank
    model = nn.parallel.DistributedDataParallel(Net())
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    shard = slice(rank * 64 // world, (rank + 1) * 64 // world)
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x[shard]), y[shard])
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"step {step}: loss on rank 0's shard {loss.item():.4f}", flush=True)
    weights = ember.stack([p.detach().sum() for p in model.parameters()])
    gathered = [ember.zeros_like(weights) for _ in range(world)]
    dist.all_gather(gathered, weights)
    assert all(ember.equal(g, gathered[0]) for g in gathered), "the ranks' models differ"
    if rank == 0:
        print(f"{world} ranks hold the same model after {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    if "RANK" in os.environ:  # started by ember launch or torchrun
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), 0, args.steps)
    else:
        with socket.socket() as s:  # a free port for the rendezvous
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(run, args=(args.world_size, port, args.steps), nprocs=args.world_size)
