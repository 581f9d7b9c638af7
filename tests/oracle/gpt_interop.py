"""Half of tests/models/gpt_test.cpp's round trip, in PyTorch 1.13 with nanoGPT's own model.py
(tests/programs/corpus/karpathy/nanoGPT, as published).

  gpt_interop.py DIR: load DIR/ember_gpt.safetensors into nanoGPT's GPT of the same shape
      (block 16, vocab 11, 2 layers, 2 heads, 8 wide, bias), compare its logits on DIR/idx.npy
      with DIR/ember_logits.npy, take one AdamW step on (idx, DIR/targets.npy), and write
      DIR/torch_gpt.safetensors and DIR/torch_logits.npy. Exit 1 on any mismatch.
"""
import contextlib
import io
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "programs", "corpus", "karpathy", "nanoGPT"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)
from lenet_interop import load_safetensors  # noqa: E402
from pytorch_lenet import save_safetensors  # noqa: E402

with contextlib.redirect_stdout(io.StringIO()):  # its "using slow attention" warning
    import model as nanogpt  # noqa: E402


def main(d):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = nanogpt.GPTConfig(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8,
                               dropout=0.0, bias=True)
    with contextlib.redirect_stdout(io.StringIO()):
        model = nanogpt.GPT(config)
    state = load_safetensors(os.path.join(d, "ember_gpt.safetensors"))
    result = model.load_state_dict(state, strict=False)
    # Under PyTorch < 2 nanoGPT keeps each block's causal mask as a buffer; ember needs none.
    masks_only = all(k.endswith(".attn.bias") for k in result.missing_keys)
    if result.unexpected_keys or not masks_only:
        print("keys differ:", result)
        return 1
    if model.lm_head.weight.data_ptr() != model.transformer.wte.weight.data_ptr():
        print("nanoGPT's weights are no longer tied")
        return 1
    idx = torch.from_numpy(np.load(os.path.join(d, "idx.npy"))).long()
    targets = torch.from_numpy(np.load(os.path.join(d, "targets.npy"))).long()
    model.eval()
    with torch.no_grad():
        mine, _ = model(idx, targets)
    theirs = torch.from_numpy(np.load(os.path.join(d, "ember_logits.npy")))
    close = torch.allclose(mine, theirs, rtol=1e-4, atol=1e-4)
    print("nanoGPT check: ember's logits reproduced: %s, max difference %.3g" %
          (close, (mine - theirs).abs().max().item()))
    model.train()
    opt = model.configure_optimizers(0.1, 1e-2, (0.9, 0.99), "cpu")
    _, loss = model(idx, targets)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        np.save(os.path.join(d, "torch_logits.npy"), model(idx, targets)[0].numpy())
    save_safetensors(os.path.join(d, "torch_gpt.safetensors"), model.state_dict())
    return 0 if close else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
