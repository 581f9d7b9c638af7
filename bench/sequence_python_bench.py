#!/usr/bin/python3
"""Sequence models from Python, ember against PyTorch 1.13 (Debian's python3-torch) in one run:
bench/sequence_step.py's GPT (nanoGPT's model.py as published) and LSTM language model
(pytorch/examples' word_language_model), each run by PyTorch and by ember (`python -m ember.run`,
the same file), alternating over --rounds; medians of the per-step medians, ratio = ember /
PyTorch.

Threads: "1" gives both libraries one thread (torch.set_num_threads(1) and OPENBLAS_NUM_THREADS=1:
Debian's PyTorch does its matrix products in OpenBLAS, whose threads set_num_threads leaves
alone). "default" runs each as a user would, on every core: set_num_threads(os.cpu_count()) and
OpenBLAS's own default.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/sequence_python_bench.py [--rounds 3]
      [--steps 10] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STEP = os.path.join(HERE, "sequence_step.py")


def run(lib, model, threads, steps):
    env = dict(os.environ)
    n = 1 if threads == "1" else os.cpu_count()
    if threads == "1":
        env["OPENBLAS_NUM_THREADS"] = "1"
    else:
        env.pop("OPENBLAS_NUM_THREADS", None)
    prefix = [sys.executable] + (["-m", "ember.run"] if lib == "ember" else [])
    out = subprocess.run(prefix + [STEP, model, str(n), str(steps)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    for model in ("gpt", "lstm"):
        for threads in ("1", "default"):
            times = {"ember": [], "torch": []}
            for _ in range(a.rounds):
                for lib in ("torch", "ember"):
                    times[lib].append(run(lib, model, threads, a.steps))
            e, t = statistics.median(times["ember"]), statistics.median(times["torch"])
            row = {"bench": model + "_train_step", "threads": threads, "ember_ms": round(e, 1),
                   "torch_ms": round(t, 1), "ratio": round(e / t, 3)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
