#!/usr/bin/python3
"""ember.compile against eager ember and PyTorch 1.13 (Debian's python3-torch) in one run: two
11-op elementwise chains over 4M float32, one of costly functions and one of cheap ones (the
memory bound: one read and one write, timed as a copy of the same bytes), and a small MLP's
training step with the forward compiled. Each case is
the best of --repeats timings of --number calls, the contenders alternating; ratios are against
eager ember (< 1: faster).

  PYTHONPATH=build/release/python /usr/bin/python3 bench/compile_bench.py [--threads 2] [--json F]
"""
import argparse
import json
import os
import timeit

import torch

import ember


def chain(lib):
    def f(x):
        y = x * 1.5 + 0.5
        y = y.sin() * x - 0.25
        y = y.exp().tanh() * 2.0
        return y + x.abs().sqrt()
    return f


def cheap_chain(lib):
    def f(x):
        y = x * 1.5 + 0.5
        y = y.relu() * x - 0.25
        y = y.sigmoid() * 2.0
        return y + x.abs() * 0.5
    return f


def mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(),
                         nn.Linear(256, 10))


def step(model, forward, opt, x, t, lib):
    def run():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(forward(x), t)
        loss.backward()
        opt.step()
    return run


def best(fn, repeats, number):
    fn()
    return min(timeit.repeat(fn, repeat=repeats, number=number)) / number


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json")
    a = ap.parse_args()
    ember.set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    rows = []

    n = 4 * 1024 * 1024
    x = ember.randn(n)
    y = ember.empty_like(x)
    tx = torch.from_numpy(x.numpy().copy())
    for title, make in (("11-op chain (sin, exp, tanh, sqrt, ...), 4M float32", chain),
                        ("10-op chain (mul, add, relu, sigmoid, abs), 4M float32", cheap_chain)):
        eager, compiled = make(ember), ember.compile(make(ember))
        assert ember.equal(compiled(x), eager(x)) and ember.equal(compiled(x), eager(x))
        assert compiled._stats()["fused_ops"] >= 10
        times = {
            "ember eager": best(lambda: eager(x), a.repeats, 5),
            "ember compiled": best(lambda: compiled(x), a.repeats, 5),
            "PyTorch 1.13 eager": best(lambda: make(torch)(tx), a.repeats, 5),
            "memory bound (copy)": best(lambda: y.copy_(x), a.repeats, 5),
        }
        rows.append((title, times))

    model, tmodel = mlp(ember), mlp(torch)
    fast = ember.compile(model)
    xb, tb = ember.randn(64, 64), ember.randint(0, 10, (64,))
    txb, ttb = torch.randn(64, 64), torch.randint(0, 10, (64,))
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.01)
    times = {
        "ember eager": best(step(model, model, opt, xb, tb, ember), a.repeats, 50),
        "ember compiled": best(step(model, fast, opt, xb, tb, ember), a.repeats, 50),
        "PyTorch 1.13 eager": best(step(tmodel, tmodel, topt, txb, ttb, torch), a.repeats, 50),
    }
    rows.append(("MLP 64-256-256-10 training step, batch 64", times))

    print(f"threads: {a.threads}")
    for name, times in rows:
        base = times["ember eager"]
        print(name)
        for k, v in times.items():
            print(f"  {k:22s} {v * 1e3:9.3f} ms   {v / base:5.2f}x of eager ember")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    main()
