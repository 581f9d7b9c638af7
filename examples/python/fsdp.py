"""FSDP2 (fully_shard) with a sharded checkpoint: each rank holds 1/N of the model and of Adam's
state, saves its part every few steps, and resumes from the last checkpoint at whatever world
size it runs at next. Start it with a launcher or a scheduler, one process per rank:
  ember launch --nproc-per-node 2 examples/python/fsdp.py
  srun -N2 --ntasks-per-node=2 python3 examples/python/fsdp.py     (examples/slurm/fsdp.sbatch)
init_process_group's env:// reads the launcher's variables or Slurm's."""
import argparse
import os

import ember
import ember.distributed as dist
import ember.distributed.checkpoint as dcp
from ember import nn
from ember.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from ember.distributed.fsdp import fully_shard


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--checkpoint", default="checkpoints/fsdp")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                          nn.Linear(64, 1))
    for layer in model[::2]:
        fully_shard(layer)
    fully_shard(model)
    optimizer = ember.optim.Adam(model.parameters(), lr=1e-2)

    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optim": optim_state, "step": 0}
    if os.path.exists(os.path.join(args.checkpoint, ".metadata")):
        dcp.load(state, checkpoint_id=args.checkpoint)
        set_state_dict(model, optimizer, model_state_dict=model_state,
                       optim_state_dict=optim_state)
        if rank == 0:
            print(f"resumed at step {state['step']} on {world} ranks", flush=True)

    data = ember.Generator().manual_seed(1)
    x = ember.randn(64, 16, generator=data)
    y = x.sum(1, keepdim=True).sin()
    mine = slice(rank * 64 // world, (rank + 1) * 64 // world)
    for step in range(state["step"], args.steps):
        loss = (model(x[mine]) - y[mine]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (step + 1) % 3 == 0 or step + 1 == args.steps:
            model_state, optim_state = get_state_dict(model, optimizer)
            dcp.save({"model": model_state, "optim": optim_state, "step": step + 1},
                     checkpoint_id=args.checkpoint)
        if rank == 0:
            print(f"step {step}: loss on rank 0's rows {loss.item():.4f}", flush=True)
    held = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in nn.Sequential(nn.Linear(16, 64), nn.Linear(64, 64),
                                                  nn.Linear(64, 1)).parameters())
    print(f"rank {rank} of {world} holds {held} of {total} parameters", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
