#!/usr/bin/python3
"""`ember train --nproc N --resume --events FILE` in PyTorch 1.13, to run under torchrun's elastic
agent: LeNet-5 on Fashion-MNIST with DDP over Gloo, one thread per rank, per-rank batch 32, SGD lr
0.01 momentum 0.9, one epoch; rank 0 writes a checkpoint every 100 steps (atomically: a temporary
file, fsync, rename) and every rank resumes from it on start, part-way in the epoch (the rest of
the epoch's order split among the ranks there are, as ember's DistributedSampler.set_start does).
Rank 0 appends the same JSON events as ember's --events (start, first_step, step, checkpoint, end).

  /usr/bin/python3 -m torch.distributed.run --nproc_per_node 2 --max_restarts 1 \\
      --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:29400 bench/pytorch_elastic.py --out DIR
"""
import time

STARTED = time.time()  # before torch's import: the rank's whole start-up is timed

import argparse, json, os, sys  # noqa: E402
import torch, torch.nn.functional as F  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_lenet import LeNet, load  # noqa: E402

ROOT = "/usr/share/datasets/fashion-mnist"
BATCH = 32


class Events:
    def __init__(self, path):
        self.f = open(path, "a") if path else None

    def write(self, event, **fields):
        if self.f:
            self.f.write(json.dumps({"time": time.time(), "event": event, **fields}) + "\n")
            self.f.flush()


def save(path, state):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    d = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    os.fsync(d)
    os.close(d)


def shard(n, epoch, start, world, rank):
    """The epoch's order from `start`, padded to a multiple of world, rank's every world-th."""
    g = torch.Generator()
    g.manual_seed(epoch)
    rest = torch.randperm(n, generator=g)[start:]
    per_rank = (len(rest) + world - 1) // world
    if len(rest) < per_rank * world:
        rest = torch.cat([rest, rest[: per_rank * world - len(rest)]])
    return rest[rank::world]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--events", default="")
    p.add_argument("--checkpoint-every", type=int, default=100)
    a = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    events = Events(a.events if rank == 0 else "")
    torch.manual_seed(0)
    x, y = load(ROOT, "train")
    model = torch.nn.parallel.DistributedDataParallel(LeNet())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    path = os.path.join(a.out, "checkpoint.pt")
    epoch, step, sample = 0, 0, 0
    load_started = time.time()
    resumed = os.path.exists(path)
    if resumed:
        state = torch.load(path)
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        epoch, step, sample = state["epoch"], state["step"], state["sample"]
    dist.barrier()
    events.write("start", restart=restart, world_size=world, resumed=resumed, started=STARTED,
                 load_seconds=time.time() - load_started, epoch=epoch, step=step, sample=sample)
    steps = 0
    for e in range(epoch, 1):
        start = sample if e == epoch else 0
        idx = shard(len(x), e, start, world, rank)
        step0 = step if e == epoch else 0
        for b in range(0, len(idx), BATCH):
            i = idx[b:b + BATCH]
            loss = F.cross_entropy(model(x[i]), y[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            batches = b // BATCH + 1
            pos = {"epoch": e, "step": step0 + batches,
                   "sample": min(len(x), start + min(len(idx), batches * BATCH) * world)}
            events.write("first_step" if steps == 1 else "step", **pos)
            if steps % a.checkpoint_every == 0 and rank == 0:
                save(path, {"model": model.module.state_dict(), "optimizer": opt.state_dict(),
                            "rng": torch.get_rng_state(), **pos})
                events.write("checkpoint", **pos)
        if rank == 0:
            nxt = {"epoch": e + 1, "step": 0, "sample": 0}
            save(path, {"model": model.module.state_dict(), "optimizer": opt.state_dict(),
                        "rng": torch.get_rng_state(), **nxt})
            events.write("checkpoint", **nxt)
    dist.barrier()
    if rank == 0:
        tx, ty = load(ROOT, "t10k")
        with torch.no_grad():
            acc = (model.module(tx).argmax(1) == ty).float().mean().item()
        events.write("end", test_accuracy=acc)
        print(json.dumps({"framework": "pytorch", "nproc": world, "restart_count": restart,
                          "test_accuracy": acc}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
