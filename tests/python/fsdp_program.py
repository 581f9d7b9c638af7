"""A small GPT trained data-parallel, written against PyTorch's API: DDP, or FSDP with a sharding
strategy (test_fsdp.py runs it with `ember launch ... python -m ember.run`, as torchrun would run
it). Rank 0 prints the mean loss over ranks after each step, and every rank the parameter elements it
holds: FSDP must give DDP's losses while holding 1/N of the parameters.

    fsdp_program.py MODE [--dtype float32|float64] [--steps N] [--width W] [--layers L]
MODE: ddp, full_shard, full_shard_prefetch (forward_prefetch=True), shard_grad_op, no_shard,
hybrid_shard, full_shard_mp (bfloat16 compute),
fully_shard (FSDP2, PyTorch 2.6's API), fully_shard_grad_op (reshard_after_forward=False),
fully_shard_hsdp (a 2-D mesh: replicate x shard).
"""
import argparse
import functools
import math
import os
import signal
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, width, layers, heads, block_size):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(block_size, width)
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2's

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1])
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def say(line):
    sys.stdout.write(line + "\n")  # one write: the ranks share the pipe
    sys.stdout.flush()


def main():
    # Imported here, so that the model above imports where FSDP does not (Debian's PyTorch 1.13
    # under Python 3.11: bench/fsdp_bench.py runs its DDP for reference).
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import (FullStateDictConfig, MixedPrecision, ShardingStrategy,
                                        StateDictType, fully_shard)
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--die-after", type=int, default=-1,
                        help="the last rank kills itself after this step (a lost node)")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    vocab, block_size = 64, 16
    model = GPT(vocab, args.width, args.layers, 4, block_size).to(dtype)
    total = sum(p.numel() for p in model.parameters())
    fsdp2 = args.mode.startswith("fully_shard")
    if args.mode == "ddp":
        model = DDP(model)
    elif fsdp2:
        mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("replicate", "shard")) \
            if args.mode == "fully_shard_hsdp" else None
        for block in model.blocks:
            fully_shard(block, mesh=mesh, reshard_after_forward=args.mode != "fully_shard_grad_op")
        fully_shard(model, mesh=mesh)
    else:
        strategy = {"full_shard": ShardingStrategy.FULL_SHARD,
                    "full_shard_prefetch": ShardingStrategy.FULL_SHARD,
                    "full_shard_mp": ShardingStrategy.FULL_SHARD,
                    "shard_grad_op": ShardingStrategy.SHARD_GRAD_OP,
                    "no_shard": ShardingStrategy.NO_SHARD,
                    "hybrid_shard": ShardingStrategy.HYBRID_SHARD}[args.mode]
        mp = (MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
              if args.mode == "full_shard_mp" else None)
        policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
        # HYBRID_SHARD: shard within pairs of ranks, replicate across pairs (as 2 machines).
        mesh = init_device_mesh("cpu", (world // 2, 2)) \
            if args.mode == "hybrid_shard" and world >= 4 else None
        model = FSDP(model, sharding_strategy=strategy, auto_wrap_policy=policy,
                     mixed_precision=mp, device_mesh=mesh,
                     forward_prefetch=args.mode == "full_shard_prefetch")
    held = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    data = torch.Generator().manual_seed(1)
    per = args.batch // world
    for step in range(args.steps):
        idx = torch.randint(0, vocab, (args.batch, block_size + 1), generator=data)
        mine = idx[rank * per:(rank + 1) * per]
        loss = model(mine[:, :-1], mine[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        if args.mode == "ddp" or fsdp2:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        else:
            model.clip_grad_norm_(1.0)
        optimizer.step()
        mean = loss.detach().clone().to(torch.float64)
        dist.all_reduce(mean)
        if rank == 0:
            say(f"step {step} loss {mean.item() / world:.17g}")
        if step == args.die_after and rank == world - 1:
            os.kill(os.getpid(), signal.SIGKILL)
    if fsdp2:
        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    elif args.mode != "ddp":
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                                  FullStateDictConfig(rank0_only=True)):
            state = model.state_dict()
    else:
        state = model.module.state_dict()
    if rank == 0:
        say(f"state {len(state)} keys, {sum(t.numel() for t in state.values())} elements")
    say(f"rank {rank} holds {held} of {total} parameter elements")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
