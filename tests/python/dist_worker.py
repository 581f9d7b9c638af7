"""A rank of the distributed tests (test_distributed.py runs it under `ember launch`): collectives,
DDP against the same model trained on the whole batch in one process, and a rank that dies."""
import os
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def collectives(rank, world):
    t = ember.full((3,), float(rank + 1))
    dist.all_reduce(t)
    assert t.tolist() == [sum(range(1, world + 1))] * 3, t
    t = ember.full((2,), float(rank))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert t.tolist() == [world - 1] * 2
    b = ember.full((2,), float(rank))
    dist.broadcast(b, src=1)
    assert b.tolist() == [1.0, 1.0]
    outs = [ember.zeros(1) for _ in range(world)]
    dist.all_gather(outs, ember.full((1,), float(rank * 10)))
    assert [o.item() for o in outs] == [r * 10.0 for r in range(world)]
    # The flat forms FSDP shards over, in both output shapes, and PyTorch 1.13's names.
    flat, stacked = ember.zeros(2 * world), ember.zeros(world, 2)
    dist.all_gather_into_tensor(flat, ember.full((2,), float(rank)))
    dist._all_gather_base(stacked, ember.full((2,), float(rank)))
    assert flat.tolist() == [float(r) for r in range(world) for _ in range(2)], flat
    assert stacked.tolist() == [[float(r)] * 2 for r in range(world)], stacked
    part = ember.zeros(3)
    chunks = ember.arange(3.0 * world) + 100 * rank
    w = dist.reduce_scatter_tensor(part, chunks, op=dist.ReduceOp.AVG, async_op=True)
    w.wait()
    assert part.tolist() == [50.0 * (world - 1) + 3 * rank + i for i in range(3)], part
    dist._reduce_scatter_base(part, chunks)
    assert part.tolist() == [world * (50.0 * (world - 1) + 3 * rank + i) for i in range(3)], part
    try:
        dist.all_gather_into_tensor(ember.zeros(3), ember.zeros(2))
        raise AssertionError("a mis-sized output was accepted")
    except RuntimeError as e:
        assert "world_size" in str(e), e
    w = dist.all_reduce(ember.ones(1), async_op=True)
    assert w.wait() and w.is_completed()
    if rank == 0:
        dist.send(ember.full((2,), 5.0), dst=1)
    elif rank == 1:
        r = ember.zeros(2)
        dist.recv(r, src=0)
        assert r.tolist() == [5.0, 5.0]
    # Objects of different sizes on each rank.
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "pad": "x" * (100 * rank)})
    assert [o["rank"] for o in objs] == list(range(world))
    assert len(objs[-1]["pad"]) == 100 * (world - 1)
    got = [None] * world if rank == 1 else None
    dist.gather_object(("r", rank), got, dst=1)
    assert rank != 1 or got == [("r", r) for r in range(world)]
    sent = [1, "two", {"three": [3.0]}] if rank == 0 else [None, None, None]
    dist.broadcast_object_list(sent, src=0)
    assert sent == [1, "two", {"three": [3.0]}]
    mine = [None]
    dist.scatter_object_list(mine, [f"to {r}" for r in range(world)] if rank == 0 else None)
    assert mine == [f"to {rank}"]
    dist.barrier()


def ddp(rank, world):
    ember.manual_seed(0)
    rng = np.random.default_rng(1)
    x = ember.from_numpy(rng.standard_normal((8, 6)).astype(np.float32))
    y = ember.from_numpy(rng.integers(0, 3, 8))
    ember.manual_seed(rank)  # different initial weights: DDP broadcasts rank 0's
    model = Net()
    ddp_model = nn.parallel.DistributedDataParallel(model)
    opt = ember.optim.SGD(ddp_model.parameters(), lr=0.1)
    shard = slice(rank * 8 // world, (rank + 1) * 8 // world)
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(ddp_model(x[shard]), y[shard]).backward()
        opt.step()
    # The same steps in one process on the whole batch, from rank 0's weights.
    ember.manual_seed(0)
    ref = Net()
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(3):
        ref_opt.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        ref_opt.step()
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=n)
    with ddp_model.no_sync():
        F.cross_entropy(ddp_model(x[shard]), y[shard]).backward()


def sync_batchnorm(rank, world):
    # Each rank normalises its shard with statistics of the whole batch: the input's gradients,
    # the parameters' summed over ranks and the running statistics equal one BatchNorm2d's on the
    # concatenated batch.
    rng = np.random.default_rng(2)
    x = ember.from_numpy(rng.standard_normal((8, 3, 4, 4)).astype(np.float32))
    g = ember.from_numpy(rng.standard_normal((8, 3, 4, 4)).astype(np.float32))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3)))
    assert type(model[0]).__name__ == "SyncBatchNorm", model
    shard = slice(rank * 8 // world, (rank + 1) * 8 // world)
    xs = x[shard].clone().requires_grad_()
    (model(xs) * g[shard]).sum().backward()
    ref = nn.BatchNorm2d(3)
    xr = x.clone().requires_grad_()
    (ref(xr) * g).sum().backward()
    close = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xs.grad.numpy(), xr.grad[shard].numpy(), **close)
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        dist.all_reduce(p.grad)  # each rank holds its shard's part, as DDP would sum them
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), **close, err_msg=n)
    for (n, b), r in zip(model.named_buffers(), ref.buffers()):
        np.testing.assert_allclose(b.numpy(), r.numpy(), **close, err_msg=n)


def dead_rank(rank, world):
    dist.barrier()
    if rank == 1:
        os._exit(3)  # dies without a word
    t = ember.ones(1)
    try:
        for _ in range(100):
            dist.all_reduce(t)
    except RuntimeError as e:
        print(f"rank {rank} saw: {e}", flush=True)
        sys.exit(0)
    sys.exit("rank 0 expected an error when rank 1 died")


if __name__ == "__main__":
    # Rank 0 made its state on the virtual device cpu:0 (the default); ranks are processes.
    dist.init_process_group("gloo", timeout=20)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == int(os.environ["WORLD_SIZE"]) and rank == int(os.environ["RANK"])
    {"collectives": collectives, "ddp": ddp, "sync_batchnorm": sync_batchnorm,
     "dead_rank": dead_rank}[sys.argv[1]](rank, world)
    dist.destroy_process_group()
    print(f"rank {rank} ok", flush=True)
