"""The compiled variant of PyTorch's elementwise OpInfo entries (UnaryUfuncInfo and
BinaryUfuncInfo in op_db): each entry's function, compiled with ember.compile, is traced on one
sample and replayed on the same sample made again with other values (another seed: the same
shapes), and must give eager ember's result on it bit for bit, NaNs in the same places. An entry
whose trace breaks runs eagerly and must still agree. Fails on any disagreement, or when fewer
entries than --min replay from a graph.

    PYTHONPATH=build/release/python OMP_NUM_THREADS=1 /usr/bin/python3 \\
        tests/conformance/compiled.py [--min N] [--filter REGEX]
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

_ELEMENTWISE = ("UnaryUfuncInfo", "BinaryUfuncInfo")


def _same(a, b):
    ta, tb = oracle._tensors(oracle.to_torch(a)), oracle._tensors(oracle.to_torch(b))
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.is_floating_point or x.dtype.is_complex:
            if not torch.equal(torch.nan_to_num(x, nan=0.0), torch.nan_to_num(y, nan=0.0)) or \
                    not torch.equal(x.isnan(), y.isnan()):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def run_entry(op, limit):
    """("replayed" | "break" | "skipped" | "wrong", detail)."""
    try:
        fn = oracle.ember_callable(op)
    except oracle.Missing:
        return "skipped", "ember lacks it"
    dtypes = [d for d in (torch.float32, torch.float64) if d in op.supported_dtypes("cpu")]
    outcome = ("skipped", "no sample ember computes")
    for dtype in dtypes:
        first = oracle._samples(op, dtype, False, limit)
        with oracle._seeded(1):
            second = []
            for s in op.sample_inputs("cpu", dtype, requires_grad=False):
                second.append(s)
                if len(second) >= limit:
                    break
        for i, (s0, s1) in enumerate(zip(first, second)):
            a0, k0 = oracle._sample_args(s0)
            a1, k1 = oracle._sample_args(s1)
            try:
                e0 = oracle.to_ember(oracle._copied((a0, k0)))
                e1 = oracle.to_ember(oracle._copied((a1, k1)))
                e1_again = oracle.to_ember(oracle._copied((a1, k1)))
            except oracle.Missing:
                continue
            try:
                want = fn(*e1[0], **e1[1])
            except Exception:  # noqa: BLE001  (eager ember refuses it: not this test's business)
                continue
            compiled = ember.compile(fn)
            where = f"{str(dtype)[6:]} sample {i}"
            try:
                compiled(*e0[0], **e0[1])
                got = compiled(*e1_again[0], **e1_again[1])
            except Exception as err:  # noqa: BLE001
                return "wrong", f"{where}: compiled raised {type(err).__name__}: {err}"
            if not _same(got, want):
                return "wrong", f"{where}: the compiled result differs from eager ember's"
            stats = compiled._stats()
            if stats["breaks"]:
                outcome = ("break", stats["breaks"][0])
            elif outcome[0] != "break":
                outcome = ("replayed", f"{stats['graph_runs']} replays")
    return outcome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min", type=int, default=0, help="fewest entries that must replay")
    ap.add_argument("--filter", default="")
    ap.add_argument("--samples", type=int, default=4)
    a = ap.parse_args()
    counts, wrong = {}, []
    for op in oracle.OP_DB:
        if type(op).__name__ not in _ELEMENTWISE or op.name in oracle.RANDOM:
            continue
        name = oracle.entry_id(op)
        if a.filter and not re.search(a.filter, name):
            continue
        status, detail = run_entry(op, a.samples)
        counts[status] = counts.get(status, 0) + 1
        if status == "wrong":
            wrong.append(f"{name}: {detail}")
        if status == "break":
            print(f"break  {name}: {detail}")
    print("compiled elementwise entries:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for w in wrong:
        print("WRONG", w)
    if wrong or counts.get("replayed", 0) < a.min:
        sys.exit(1)


if __name__ == "__main__":
    main()
