"""One model's training steps, timed, in whichever `torch` runs it: PyTorch 1.13 itself, or ember
under `python -m ember.run` (which gives this file ember as `torch`). bench/sequence_python_bench.py
runs it both ways, alternating.

  gpt:  nanoGPT's model.py as published (tests/programs/corpus/karpathy/nanoGPT) at
        shakespeare_char's shape scaled to a CPU: 4 layers, 4 heads, 256 wide, block 128, batch
        16, 65 characters; its configure_optimizers (AdamW), clipping at 1. Under PyTorch 1.13
        nanoGPT takes its manual attention, under ember F.scaled_dot_product_attention.
  lstm: pytorch/examples' word_language_model RNNModel at 2 x 256, vocabulary 10000, batch 32,
        35 steps (bptt), SGD lr 20 and clipping at 0.25, as its main.py trains.

  python3 bench/sequence_step.py gpt|lstm THREADS STEPS   -> prints the median ms per step
"""
import contextlib
import io
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "programs", "corpus")

import torch  # noqa: E402  (ember's, under ember.run)
import torch.nn as nn  # noqa: E402


def gpt():
    sys.path.insert(0, os.path.join(CORPUS, "karpathy", "nanoGPT"))
    with contextlib.redirect_stdout(io.StringIO()):  # its parameter-count and warning prints
        import model as nanogpt
        config = nanogpt.GPTConfig(block_size=128, vocab_size=65, n_layer=4, n_head=4, n_embd=256,
                                   dropout=0.0, bias=True)
        m = nanogpt.GPT(config)
        opt = m.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    x, y = torch.randint(0, 65, (16, 128)), torch.randint(0, 65, (16, 128))

    def step():
        _, loss = m(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss
    return step


def lstm():
    sys.path.insert(0, os.path.join(CORPUS, "examples", "word_language_model"))
    import model as wlm
    m = wlm.RNNModel("LSTM", 10000, 256, 256, 2, dropout=0.0)
    criterion = nn.NLLLoss()
    opt = torch.optim.SGD(m.parameters(), lr=20)
    x, y = torch.randint(0, 10000, (35, 32)), torch.randint(0, 10000, (35 * 32,))

    def step():
        hidden = m.init_hidden(32)
        out, hidden = m(x, hidden)
        loss = criterion(out, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 0.25)
        opt.step()
        return loss
    return step


def main(which, threads, steps):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    step = {"gpt": gpt, "lstm": lstm}[which]()
    for _ in range(2):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step().item()
        times.append(time.perf_counter() - t0)
    print("%.2f" % (1000 * statistics.median(times)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
