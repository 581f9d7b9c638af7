"""A program written against PyTorch's FSDP, FSDP2 and torch.distributed.checkpoint (the DCP
tutorial's AppState), run by test_dcp.py under `ember launch ... python -m ember.run`.

  save DIR API     trains 2 Adam steps, saves a sharded checkpoint into DIR, and (rank 0) the
                   full model and optimizer state beside it (DIR.ref.pt) for the loads to match
  load DIR API     a freshly initialised model, wrapped as API says, loads DIR: its full state
                   must be DIR.ref.pt's exactly, whatever world size saved it
  die DIR API      saves DIR, trains a step, saves again, and rank 1 dies halfway through
                   writing its file: DIR must still hold the first checkpoint
  elastic DIR API  trains 8 steps saving each, resuming from DIR's checkpoint when there is one
                   (the elastic launcher restarts it with the ranks left)
  torch26 DIR -    loads PyTorch 2.6's checkpoint DIR into this world's DTensor blocks
API: fully_shard (per layer and root), fsdp (FullyShardedDataParallel, saved through
state_dict_type(SHARDED_STATE_DICT)), ddp, or plain."""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     get_optimizer_state_dict, get_state_dict,
                                                     set_state_dict)
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType, fully_shard


class AppState(Stateful):
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model_state, optimizer_state = get_state_dict(self.model, self.optimizer)
        return {"model": model_state, "optim": optimizer_state}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optim"])


def build(api, seed):
    torch.manual_seed(seed)
    # Rows of 7, 3 and 4: uneven blocks at 2 and 3 ranks, an empty one at 4.
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3), nn.Tanh(), nn.Linear(3, 4))
    if api == "fully_shard":
        for layer in (model[0], model[2]):
            fully_shard(layer)
        fully_shard(model)
    elif api == "fsdp":
        model = FSDP(model)
    elif api == "ddp":
        model = nn.parallel.DistributedDataParallel(model)
    return model, torch.optim.Adam(model.parameters(), lr=0.05)


def train(model, optimizer, steps, start=0):
    for step in range(start, start + steps):
        g = torch.Generator().manual_seed(100 * step + dist.get_rank())
        x = torch.randn(6, 5, generator=g)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def full_state(model, optimizer):
    options = StateDictOptions(full_state_dict=True)
    return {"model": get_model_state_dict(model, options=options),
            "optim": get_optimizer_state_dict(model, optimizer, options=options)}


def save(path, api, model, optimizer, step):
    if api == "fsdp":
        # FSDP's own way: SHARDED_STATE_DICT, then DCP.
        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
            state = {"app": {"model": model.state_dict(),
                             "optim": FSDP.optim_state_dict(model, optimizer)}, "step": step}
        dcp.save(state, checkpoint_id=path)
    else:
        dcp.save({"app": AppState(model, optimizer), "step": step}, checkpoint_id=path)


def main():
    mode, path, api = sys.argv[1:4]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if mode in ("save", "die"):
        model, optimizer = build(api, seed=0)
        train(model, optimizer, 2)
        save(path, api, model, optimizer, step=2)
        full = full_state(model, optimizer)
        if rank == 0:
            torch.save(full, path + ".ref.pt")
        if mode == "die":
            train(model, optimizer, 1, start=2)
            write = dcp.FileSystemWriter._write

            def dying_write(self, name, items):
                if rank == 1:  # half of the file, then killed as by the OOM killer
                    write(self, name, items[:len(items) // 2])
                    os.kill(os.getpid(), signal.SIGKILL)
                return write(self, name, items)

            dcp.FileSystemWriter._write = dying_write
            save(path, api, model, optimizer, step=3)
    elif mode == "load":
        model, optimizer = build(api, seed=1)
        state = {"app": AppState(model, optimizer), "step": 0}
        dcp.load(state, checkpoint_id=path)
        assert state["step"] == 2, state["step"]
        full = full_state(model, optimizer)
        if rank == 0:
            ref = torch.load(path + ".ref.pt")
            torch.testing.assert_close(full["model"], ref["model"], rtol=0, atol=0)
            torch.testing.assert_close(full["optim"]["state"], ref["optim"]["state"], rtol=0,
                                       atol=0)
        train(model, optimizer, 1, start=2)  # and it trains on
    elif mode == "elastic":
        # Resumes from the last checkpoint at whatever world size the launcher restarted it.
        model, optimizer = build(api, seed=0)
        state = {"app": AppState(model, optimizer), "step": 0}
        if os.path.exists(os.path.join(path, ".metadata")):
            dcp.load(state, checkpoint_id=path)
        world, restart = dist.get_world_size(), os.environ.get("TORCHELASTIC_RESTART_COUNT")
        print(f"rank {rank} of {world} at restart {restart} resumes at step {state['step']}",
              flush=True)
        for step in range(state["step"], 8):
            train(model, optimizer, 1, start=step)
            dcp.save({"app": AppState(model, optimizer), "step": step + 1}, checkpoint_id=path)
            print(f"rank {rank} of {world} saved step {step + 1}", flush=True)
            time.sleep(0.3)
    elif mode == "torch26":
        # PyTorch 2.6's checkpoint (saved at 2 ranks), loaded into this world's DTensor blocks.
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_tensor
        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        w = distribute_tensor(torch.zeros(7, 5), mesh, [Shard(0)])
        state = {"model": {"w": w, "b": torch.zeros(3, dtype=torch.float64),
                           "plain": torch.zeros(2, 2, dtype=torch.int64)},
                 "step": 0, "meta": {"name": "", "lrs": []}}
        dcp.load(state, checkpoint_id=path)
        torch.testing.assert_close(w.full_tensor(), torch.arange(35.0).reshape(7, 5))
        assert state["step"] == 12 and state["model"]["plain"].tolist() == [[1, 2], [3, 4]]
    print(f"rank {rank} {mode} ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
