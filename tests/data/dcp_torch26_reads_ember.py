"""PyTorch 2.6 reads an ember-written sharded checkpoint: run in a Debian 13 root (see
dcp_torch26.py's header) on a checkpoint that tests/python/dcp_program.py saved with ember,
  PYTHONPATH=build/release/python ember launch --nproc-per-node 2 \\
      tests/python/dcp_program.py save /tmp/ck fully_shard        (here; writes /tmp/ck.ref.pt)
  cp -r /tmp/ck /tmp/ck.ref.pt ROOT/tmp/ && chroot ROOT python3 dcp_torch26_reads_ember.py /tmp/ck
PyTorch's own dcp_to_torch_save consolidates it, and the model and Adam state must equal the full
state ember saved beside it (torch.save'd by ember), bit for bit."""
import sys

import torch
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

dcp_to_torch_save(sys.argv[1], sys.argv[1] + ".consolidated.pt")
got = torch.load(sys.argv[1] + ".consolidated.pt", weights_only=False)["app"]
ref = torch.load(sys.argv[1] + ".ref.pt", weights_only=False)
torch.testing.assert_close(got["model"], ref["model"], rtol=0, atol=0)
torch.testing.assert_close(got["optim"]["state"], ref["optim"]["state"], rtol=0, atol=0)
print("PyTorch", torch.__version__, "reads ember's checkpoint:", len(got["model"]), "tensors,",
      len(got["optim"]["state"]), "optimizer states, equal to ember's full state dict")
