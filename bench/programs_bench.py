#!/usr/bin/python3
"""Public PyTorch programs as written, timed whole under PyTorch 1.13 and under ember
(`python -m ember.run`), the same file on the same data (tests/programs/runner.py: the suite of
tests/python/test_programs.py, pytorch/examples and nanoGPT's train.py). Wall time of the whole
process, start-up and import included, as a user waits for it; torch and ember alternate over
--rounds and the best of each is compared (whole programs vary most in the slower library, so best
against best), ratio = ember / PyTorch.

Threads: "1" sets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1 for both (as the test does); "default"
leaves each library its default on every core.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/programs_bench.py [--rounds 3]
      [--threads 1,default] [--only mnist,vae] [--json FILE]
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "programs"))
import runner  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,default")
    ap.add_argument("--only", help="comma-separated program ids")
    ap.add_argument("--json")
    a = ap.parse_args()
    import ember  # the ember the programs get: this one, whatever their working directory
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    cases = runner.CASES + [runner.NANOGPT]
    if a.only:
        wanted = set(a.only.split(","))
        cases = [c for c in cases if c[0] in wanted]
    rows = []
    with tempfile.TemporaryDirectory() as root:
        runner.prepare(root)
        for name, program, args, where, pattern, _ in cases:
            path = program if where == "nanogpt" else os.path.join(runner.SUITE, program)
            for threads in a.threads.split(","):
                env = runner.environment(package_root, None if threads == "default" else threads)
                best, metric = {}, {}
                for _ in range(a.rounds):
                    for lib in ("torch", "ember"):
                        extra = ["--out_dir=out_" + lib] if where == "nanogpt" else []
                        start = time.perf_counter()
                        out = runner.run(lib, path, args + extra, os.path.join(root, where), env,
                                         timeout=900)
                        seconds = time.perf_counter() - start
                        best[lib] = min(best.get(lib, seconds), seconds)
                        metric[lib] = runner.last(pattern, out)
                row = {"program": name, "threads": threads, "ember_s": round(best["ember"], 2),
                       "torch_s": round(best["torch"], 2),
                       "ratio": round(best["ember"] / best["torch"], 3),
                       "ember_metric": metric["ember"], "torch_metric": metric["torch"]}
                print(json.dumps(row), flush=True)
                rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
