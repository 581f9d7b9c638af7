#!/usr/bin/python3
"""ember's Python API against PyTorch 1.13 (Debian's python3-torch) in one run, on one thread:

  1. per-op overhead on 1-element float32 tensors (a + b, a.add_(b), a.relu()): best of 5 repeats
     of N calls each, ember and PyTorch alternating;
  2. a LeNet-5 training step (batch 64, the model a Python nn.Module subclass in each library):
     median of the repeats;
  3. data from Python: ember.tensor / torch.tensor of a 10000x100 list of floats, and one pass
     of each library's DataLoader over the same kind of Python Dataset (10000 samples of a
     (1, 28, 28) tensor and an int label, default_collate, batch 64): best of 5, alternating;
  4. one Fashion-MNIST epoch from a Python loop: bench/python_lenet.py against
     bench/pytorch_lenet.py (the same recipe), alternating over --rounds, medians and accuracies.

Ratios are ember / PyTorch (< 1: ember is faster).

  PYTHONPATH=build/release/python /usr/bin/python3 bench/python_bench.py [--rounds 3] [--json F]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit

import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def overhead(n):
    rows = []
    ea, eb = ember.ones(1), ember.ones(1)
    ta, tb = torch.ones(1), torch.ones(1)
    for name, stmt in [("a + b", "a + b"), ("a.add_(b)", "a.add_(b)"), ("a.relu()", "a.relu()")]:
        best = {}
        for lib, g in [("ember", {"a": ea, "b": eb}), ("torch", {"a": ta, "b": tb})] * 2:
            t = min(timeit.repeat(stmt, globals=g, number=n, repeat=5)) / n
            best[lib] = min(best.get(lib, t), t)
        rows.append({"bench": "overhead", "op": name, "ember_us": best["ember"] * 1e6,
                     "torch_us": best["torch"] * 1e6, "ratio": best["ember"] / best["torch"]})
    return rows


def lenet_step(repeats):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import python_lenet
    import pytorch_lenet
    import ember.nn.functional as EF
    import torch.nn.functional as TF
    em, tm = python_lenet.LeNet(), pytorch_lenet.LeNet()
    eo = ember.optim.SGD(em.parameters(), lr=0.01, momentum=0.9)
    to = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
    ex, ey = ember.randn(64, 1, 28, 28), ember.randint(0, 10, (64,))
    tx, ty = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))

    def estep():
        loss = EF.cross_entropy(em(ex), ey)
        eo.zero_grad()
        loss.backward()
        eo.step()

    def tstep():
        loss = TF.cross_entropy(tm(tx), ty)
        to.zero_grad()
        loss.backward()
        to.step()

    times = {"ember": [], "torch": []}
    for _ in range(repeats):
        for lib, f in (("ember", estep), ("torch", tstep)):
            times[lib].append(min(timeit.repeat(f, number=20, repeat=3)) / 20)
    e, t = statistics.median(times["ember"]), statistics.median(times["torch"])
    return [{"bench": "lenet_step_b64", "ember_ms": e * 1e3, "torch_ms": t * 1e3, "ratio": e / t}]


def data_from_python():
    import torch.utils.data as tud
    import ember.utils.data as eud
    rows = []
    floats = [[float(i + j) for j in range(100)] for i in range(10000)]

    def dataset(lib, base):
        images = [lib.full((1, 28, 28), float(i % 7)) for i in range(10000)]

        class Samples(base):
            def __len__(self):
                return len(images)

            def __getitem__(self, i):
                return images[i], i % 10
        return Samples()

    loaders = {"ember": eud.DataLoader(dataset(ember, eud.Dataset), batch_size=64),
               "torch": tud.DataLoader(dataset(torch, tud.Dataset), batch_size=64)}
    for name, stmts in [("tensor(list 10000x100)", {"ember": lambda: ember.tensor(floats),
                                                     "torch": lambda: torch.tensor(floats)}),
                        ("DataLoader pass, Python Dataset",
                         {lib: (lambda l=l: sum(1 for _ in l)) for lib, l in loaders.items()})]:
        best = {}
        for lib in ("ember", "torch") * 2:
            t = min(timeit.repeat(stmts[lib], number=1, repeat=5))
            best[lib] = min(best.get(lib, t), t)
        rows.append({"bench": "data", "op": name, "ember_ms": best["ember"] * 1e3,
                     "torch_ms": best["torch"] * 1e3, "ratio": best["ember"] / best["torch"]})
    return rows


def epoch(rounds):
    env = dict(os.environ)
    runs = {"ember": [], "torch": []}
    for r in range(rounds):
        for lib, script in (("ember", "python_lenet.py"), ("torch", "pytorch_lenet.py")):
            out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), "--threads", "1",
                                  "--seed", str(r)], capture_output=True, text=True, env=env, timeout=900)
            if out.returncode != 0:
                sys.exit(f"{script} failed:\n{out.stdout}\n{out.stderr}")
            runs[lib].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"  round {r} {lib}: {runs[lib][-1]['train_seconds']:.2f} s, "
                  f"accuracy {100 * runs[lib][-1]['test_accuracy']:.2f}%", flush=True)
    med = {k: statistics.median(j["train_seconds"] for j in v) for k, v in runs.items()}
    acc = {k: statistics.mean(j["test_accuracy"] for j in v) * 100 for k, v in runs.items()}
    return [{"bench": "epoch_fashion_mnist", "ember_s": med["ember"], "torch_s": med["torch"],
             "ratio": med["ember"] / med["torch"], "ember_accuracy": acc["ember"],
             "torch_accuracy": acc["torch"], "rounds": rounds}]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=200000)
    p.add_argument("--json", default="")
    p.add_argument("--skip-epoch", action="store_true")
    a = p.parse_args()
    ember.set_num_threads(1)
    torch.set_num_threads(1)
    print(f"ember {ember.__version__} vs PyTorch {torch.__version__}, one thread", flush=True)
    rows = overhead(a.calls)
    for r in rows:
        print(f"overhead {r['op']:10} ember {r['ember_us']:.3f} us, PyTorch {r['torch_us']:.3f} us, "
              f"ratio {r['ratio']:.2f}", flush=True)
    step = lenet_step(5)
    rows += step
    print(f"LeNet step, batch 64: ember {step[0]['ember_ms']:.2f} ms, PyTorch {step[0]['torch_ms']:.2f} ms, "
          f"ratio {step[0]['ratio']:.2f}", flush=True)
    data = data_from_python()
    rows += data
    for r in data:
        print(f"{r['op']}: ember {r['ember_ms']:.1f} ms, PyTorch {r['torch_ms']:.1f} ms, "
              f"ratio {r['ratio']:.2f}", flush=True)
    if not a.skip_epoch:
        ep = epoch(a.rounds)
        rows += ep
        e = ep[0]
        print(f"Fashion-MNIST epoch from Python: ember {e['ember_s']:.2f} s, PyTorch {e['torch_s']:.2f} s, "
              f"ratio {e['ratio']:.2f}; accuracy {e['ember_accuracy']:.2f}% vs {e['torch_accuracy']:.2f}%")
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
