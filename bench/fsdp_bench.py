#!/usr/bin/python3
"""FSDP's training step against DDP's on the same model in one run: a GPT (tests/python/
fsdp_program.py's, --width and --layers) under AdamW on --nproc ranks over Gloo, each way started
by `ember launch` as torchrun would start it (`python -m ember.run`), one thread per rank. Each
reports the median of --steps steps after two warm-up steps; ratios are against ember's DDP
(> 1: slower). PyTorch 1.13's DDP runs the same program for reference (its FSDP needs a GPU).

  PYTHONPATH=build/release/python /usr/bin/python3 bench/fsdp_bench.py [--nproc 2] [--json F]
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "..", "tests", "python")
MODES = ["ddp", "full_shard", "full_shard_prefetch", "shard_grad_op", "fully_shard"]


def rank_main(args):
    import functools

    import torch
    import torch.distributed as dist

    sys.path.insert(0, PROGRAM)
    from fsdp_program import GPT, Block

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    vocab, block = 256, 64
    model = GPT(vocab, args.width, args.layers, 4, block)
    if args.mode == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.mode == "fully_shard":
        from torch.distributed.fsdp import fully_shard
        for b in model.blocks:
            fully_shard(b)
        fully_shard(model)
    else:  # (Debian's PyTorch 1.13 cannot import its FSDP under Python 3.11)
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp import ShardingStrategy
        from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
        strategy = {"full_shard": ShardingStrategy.FULL_SHARD,
                    "full_shard_prefetch": ShardingStrategy.FULL_SHARD,
                    "shard_grad_op": ShardingStrategy.SHARD_GRAD_OP}[args.mode]
        model = FSDP(model, sharding_strategy=strategy,
                     auto_wrap_policy=functools.partial(transformer_auto_wrap_policy,
                                                        transformer_layer_cls={Block}),
                     forward_prefetch=args.mode == "full_shard_prefetch")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    times = []
    for step in range(args.steps + 2):
        idx = torch.randint(0, vocab, (args.batch, block + 1), generator=g)
        start = time.perf_counter()
        loss = model(idx[:, :-1], idx[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        dist.barrier()
        if step >= 2:
            times.append(time.perf_counter() - start)
    if rank == 0:
        sys.stdout.write(f"median step {statistics.median(times) * 1e3:.2f} ms\n")
        sys.stdout.flush()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, lib, mode):
    base = [sys.executable] + (["-m", "ember.run"] if lib == "ember" else [])
    rank_args = [os.path.abspath(__file__), "--rank", mode, "--width", str(args.width),
                 "--layers", str(args.layers), "--batch", str(args.batch),
                 "--steps", str(args.steps)]
    # Both under ember's launcher, which sets torchrun's environment (Debian's torchrun fails
    # under Python 3.11).
    cmd = [args.ember, "launch", "--nproc-per-node", str(args.nproc), "--master-port",
           str(free_port())] + base + rank_args
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    m = re.search(r"median step ([0-9.]+) ms", out.stdout)
    if not m:
        raise SystemExit(f"{lib} {mode} failed:\n{out.stdout}\n{out.stderr}")
    return float(m.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", help=argparse.SUPPRESS)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--ember", default=os.path.join(HERE, "..", "build", "release", "tools",
                                                        "ember"))
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.rank:
        args.mode = args.rank
        return rank_main(args)
    results = {"torch ddp": run(args, "torch", "ddp")}
    for mode in MODES:
        results[f"ember {mode}"] = run(args, "ember", mode)
    base = results["ember ddp"]
    print(f"GPT width {args.width}, {args.layers} layers, batch {args.batch} x 64 per rank, "
          f"{args.nproc} ranks (median step, ms; ratio to ember's DDP)")
    for name, ms in results.items():
        print(f"  {name:20s} {ms:9.2f}   {ms / base:5.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
