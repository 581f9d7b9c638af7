"""Writes tests/data/dcp_torch26/ with PyTorch 2.6 (Debian 13's python3-torch) at 2 ranks over
Gloo: a Shard(0) DTensor, a Replicate DTensor, a plain tensor and non-tensor values. In a Debian 13
root (mmdebstrap trixie ROOT --include=python3-torch), with /proc and /dev bound:
  for r in 0 1; do MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 WORLD_SIZE=2 USE_LIBUV=0 RANK=$r \
      LOCAL_RANK=$r python3 dcp_torch26.py OUT & done; wait
test_dcp.py loads it in one process and at 3 ranks."""
import os, sys
import torch, torch.distributed as dist, torch.distributed.checkpoint as dcp
from torch.distributed.tensor import distribute_tensor, Shard, Replicate
from torch.distributed.device_mesh import init_device_mesh

out = sys.argv[1]
dist.init_process_group("gloo")
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
full = torch.arange(35, dtype=torch.float32).reshape(7, 5)
state = {
    "model": {"w": distribute_tensor(full, mesh, [Shard(0)]),
              "b": distribute_tensor(torch.arange(3, dtype=torch.float64), mesh, [Replicate()]),
              "plain": torch.tensor([[1, 2], [3, 4]], dtype=torch.int64)},
    "step": 12, "meta": {"name": "tiny", "lrs": [0.1, 0.01]},
}
dcp.save(state, checkpoint_id=out)
dist.barrier()
if dist.get_rank() == 0:
    print(sorted(os.listdir(out)))
dist.destroy_process_group()
