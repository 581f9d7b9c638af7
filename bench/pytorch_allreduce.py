#!/usr/bin/python3
"""PyTorch 1.13 torch.distributed.all_reduce (Gloo) of float32 tensors from 4 KiB to 64 MiB between
2 processes, timed like bench/distributed_bench.cpp allreduce (bus bandwidth, one JSON line)."""
import json, os, sys, time
import torch, torch.distributed as dist, torch.multiprocessing as mp


def worker(rank, world, port):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    results = []
    nbytes = 4096
    while nbytes <= 64 << 20:
        t = torch.ones(nbytes // 4)
        iters = min(200, max(3, (256 << 20) // nbytes // 8))
        dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        sec = (time.perf_counter() - start) / iters
        results.append({"bytes": nbytes, "us": round(sec * 1e6, 1),
                        "busbw_GBps": round(nbytes * 2 * (world - 1) / world / sec / 1e9, 3)})
        nbytes *= 4
    if rank == 0:
        print(json.dumps({"bench": "allreduce", "framework": "pytorch", "results": results}))
    dist.destroy_process_group()


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 29788
    mp.spawn(worker, args=(2, port), nprocs=2)
