#!/usr/bin/python3
"""Unary math on the CPU: ember against PyTorch 1.13 (Debian's python3-torch) on the same 4M
float32 in one run, best of 5 timings of 5 calls each, the two alternating.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/unary_bench.py [--threads 2]
"""
import argparse
import timeit

import torch

import ember


def best(fn):
    fn()
    return min(timeit.repeat(fn, repeat=5, number=5)) / 5 * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ember.set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    ember.manual_seed(0)
    x = ember.randn(1 << 22)
    tx = torch.from_numpy(x.numpy().copy())
    ax, tax = x.abs(), tx.abs()
    cases = [("sin", x, tx), ("cos", x, tx), ("exp", x, tx), ("tanh", x, tx), ("log", ax, tax),
             ("sqrt", ax, tax), ("sqrt of negatives too", x, tx), ("sigmoid", x, tx)]
    print(f"4M float32, {a.threads} threads: ember ms, PyTorch ms, ratio")
    for name, e, t in cases:
        op = name.split()[0]
        ours = best(lambda: getattr(e, op)())
        theirs = best(lambda: getattr(t, op)())
        print(f"  {name:22s} {ours:7.3f} {theirs:7.3f}  {ours / theirs:5.2f}")


if __name__ == "__main__":
    main()
