"""Half of tests/io/interop_test.cpp, in PyTorch 1.13.

  train DIR: train LeNet briefly, write DIR/torch_lenet.safetensors and DIR/torch_logits.npy
             (logits of the first 500 test images)
  check DIR: load DIR/ember_lenet.safetensors, predict the same images, compare with
             DIR/ember_logits.npy; exit 1 if the classes differ
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from pytorch_lenet import LeNet, load, save_safetensors  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64}


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        arr = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def main(mode, d):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    xte, yte = load(DATA, "t10k")
    x = xte[:500]
    model = LeNet()
    if mode == "train":
        xtr, ytr = load(DATA, "train")
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for i in range(0, 64 * 150, 64):
            opt.zero_grad()
            F.cross_entropy(model(xtr[i:i + 64]), ytr[i:i + 64]).backward()
            opt.step()
        save_safetensors(os.path.join(d, "torch_lenet.safetensors"), model.state_dict())
        with torch.no_grad():
            np.save(os.path.join(d, "torch_logits.npy"), model(x).numpy())
        return 0
    model.load_state_dict(load_safetensors(os.path.join(d, "ember_lenet.safetensors")))
    model.eval()
    with torch.no_grad():
        mine = model(x)
    theirs = torch.from_numpy(np.load(os.path.join(d, "ember_logits.npy")))
    same = (mine.argmax(1) == theirs.argmax(1)).all().item()
    close = torch.allclose(mine, theirs, rtol=1e-4, atol=1e-4)
    print("pytorch check: same classes", same, "close logits", close)
    return 0 if same and close else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
