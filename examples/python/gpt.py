"""A GPT trained character-level on Tiny Shakespeare, then sampled: `ember train --model gpt` and
`ember generate` from Python, with nanoGPT's recipe for a CPU (4 layers, 4 heads, 128 wide, block
64, batch 12, AdamW at 1e-3 with warm-up and cosine decay, gradients clipped at 1). The model is
ember.models.GPT: nanoGPT's module names and state-dict keys, so the checkpoint it saves loads
into nanoGPT's model.py in PyTorch.

  python3 examples/python/gpt.py [--iters 2000] [--device cpu] [--save gpt.safetensors]
"""
import argparse
import math
import os
import time

import numpy as np

import ember

HERE = os.path.dirname(os.path.abspath(__file__))
SHAKESPEARE = os.path.join(HERE, "..", "..", "data", "tinyshakespeare", "input.txt")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=SHAKESPEARE)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=12)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default="cuda" if ember.cuda.is_available() else "cpu")
    ap.add_argument("--save", default="")
    a = ap.parse_args()
    ember.manual_seed(1337)

    # nanoGPT's shakespeare_char: the characters in sorted order are the vocabulary; 90% trains.
    text = open(a.data, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}
    rng = np.random.default_rng(1337)

    def batch(split):
        d = splits[split]
        ix = rng.integers(0, len(d) - a.block_size, a.batch_size)
        x = np.stack([d[i:i + a.block_size] for i in ix])
        y = np.stack([d[i + 1:i + 1 + a.block_size] for i in ix])
        return ember.from_numpy(x).to(a.device), ember.from_numpy(y).to(a.device)

    model = ember.models.GPT(block_size=a.block_size, vocab_size=len(chars), n_layer=4, n_head=4,
                             n_embd=128, dropout=0.0).to(a.device)
    print(f"GPT with {model.get_num_params() / 1e6:.2f}M parameters on {a.device}")
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = ember.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr,
                            betas=(0.9, 0.99))

    def lr_at(it, warmup=100, min_lr=a.lr / 10):
        if it < warmup:
            return a.lr * (it + 1) / (warmup + 1)
        ratio = min(1.0, (it - warmup) / max(1, a.iters - warmup))
        return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (a.lr - min_lr)

    @ember.no_grad()
    def estimate_loss(iters=20):
        model.eval()
        out = {s: float(np.mean([model(*batch(s))[1].item() for _ in range(iters)]))
               for s in ("train", "val")}
        model.train()
        return out

    t0 = time.time()
    for it in range(a.iters + 1):
        if it % 250 == 0 or it == a.iters:
            losses = estimate_loss()
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}, "
                  f"{time.time() - t0:.1f} s")
        if it == a.iters:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(it)
        _, loss = model(*batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        ember.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    if a.save:
        ember.save(model.state_dict(), a.save)
    # A sample: softmax(logits / 0.8), the 200 most likely characters.
    start = ember.tensor([[stoi["\n"]]], device=a.device)
    tokens = model.generate(start, 300, temperature=0.8, top_k=200)[0].tolist()
    print("sample:" + "".join(chars[t] for t in tokens))


if __name__ == "__main__":
    main()
