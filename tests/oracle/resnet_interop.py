"""Half of tests/models/resnet_interop_test.cpp, in PyTorch 1.13.

  check DIR small|imagenet: load DIR/ember_resnet.safetensors into bench/pytorch_resnet.py's
      ResNet-18 (torchvision's module names; small: 1 channel and d2l's stem, imagenet: 3 channels
      and torchvision's), compare its evaluation-mode logits on DIR/x.npy with DIR/ember_logits.npy,
      then take one training step on (x, DIR/y.npy) (batch norm's running statistics move too) and
      write DIR/torch_resnet.safetensors and DIR/torch_logits.npy. Exit 1 on any mismatch.
Where torchvision is installed, the state dict's names and shapes are also checked against
torchvision.models.resnet18's.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)
from lenet_interop import load_safetensors  # noqa: E402
from pytorch_lenet import save_safetensors  # noqa: E402
from pytorch_resnet import ResNet18  # noqa: E402


def check_torchvision_names(model):
    try:
        import torchvision
    except ImportError:
        print("torchvision not installed: names checked against bench/pytorch_resnet.py only")
        return True
    theirs = torchvision.models.resnet18(num_classes=10).state_dict()
    mine = model.state_dict()
    same = list(theirs) == list(mine) and all(
        theirs[k].shape == mine[k].shape for k in theirs if k != "conv1.weight")
    print("torchvision resnet18 names and shapes:", "same" if same else "DIFFERENT")
    return same


def main(mode, d, variant):
    assert mode == "check"
    torch.manual_seed(0)
    torch.set_num_threads(1)
    small = variant == "small"
    model = ResNet18(1 if small else 3, 10, small_stem=small)
    ok = check_torchvision_names(model)
    state = load_safetensors(os.path.join(d, "ember_resnet.safetensors"))
    if list(sorted(state)) != sorted(model.state_dict()):
        print("ember's keys differ:", sorted(set(state) ^ set(model.state_dict())))
        return 1
    model.load_state_dict(state)
    x = torch.from_numpy(np.load(os.path.join(d, "x.npy")))
    y = torch.from_numpy(np.load(os.path.join(d, "y.npy"))).long()
    model.eval()
    with torch.no_grad():
        mine = model(x)
    theirs = torch.from_numpy(np.load(os.path.join(d, "ember_logits.npy")))
    close = torch.allclose(mine, theirs, rtol=1e-4, atol=1e-4)
    print("pytorch check (%s): ember's logits reproduced: %s, max difference %.3g" %
          (variant, close, (mine - theirs).abs().max().item()))
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        np.save(os.path.join(d, "torch_logits.npy"), model(x).numpy())
    save_safetensors(os.path.join(d, "torch_resnet.safetensors"), model.state_dict())
    return 0 if close and ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
