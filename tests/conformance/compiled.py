"""The compiled variant of PyTorch's elementwise OpInfo entries (UnaryUfuncInfo and
BinaryUfuncInfo in op_db): each entry's function, and the function applied twice to its own
scaled result (a chain to fuse), compiled with ember.compile, is traced on one
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

# Where g++ contracts a functor's multiply-adds differently inside the fused block loop than in
# the eager kernel's loop (the same source, another inlining), and the chain amplifies the
# last bit: relative differences allowed.
_CONTRACTED = {"igammac": 1e-12, "igamma": 1e-12}


# polygamma of its own result runs its series on values in the thousands: half a minute a
# sample, eager too.
_NOT_CHAINED = {"polygamma", "special.polygamma"}


def _same(a, b, rtol=0.0):
    ta, tb = oracle._tensors(oracle.to_torch(a)), oracle._tensors(oracle.to_torch(b))
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.is_complex:
            x, y = torch.view_as_real(x), torch.view_as_real(y)
        if x.dtype.is_floating_point:
            if rtol and torch.allclose(x, y, rtol=rtol, atol=0.0, equal_nan=True):
                continue
            if not torch.equal(x.isnan(), y.isnan()) or \
                    not torch.equal(x.nan_to_num(0.0, 0.0, 0.0), y.nan_to_num(0.0, 0.0, 0.0)) or \
                    not torch.equal(x.isinf() & (x > 0), y.isinf() & (y > 0)) or \
                    not torch.equal(x.isinf() & (x < 0), y.isinf() & (y < 0)):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def _twice(fn):
    """The op applied to its own result, scaled between: a chain of table entries to fuse."""
    def chained(x, *args, **kwargs):
        return fn(fn(x, *args, **kwargs) * 0.5, *args, **kwargs)
    return chained


def run_entry(op, limit):
    """("replayed" | "break" | "skipped" | "wrong", detail, fused ops)."""
    try:
        op_fn = oracle.ember_callable(op)
    except oracle.Missing:
        return "skipped", "ember lacks it", 0
    outcome = ("skipped", "no sample ember computes")
    fused = 0
    variants = (op_fn,) if op.name in _NOT_CHAINED else (op_fn, _twice(op_fn))
    for fn in variants:
        status, detail, n = _run_variant(op, fn, limit)
        fused += n
        if status == "wrong":
            return status, detail, fused
        if status != "skipped" and outcome[0] != "break":
            outcome = (status, detail)
    return outcome + (fused,)


def _run_variant(op, fn, limit):
    dtypes = [d for d in (torch.float32, torch.float64) if d in op.supported_dtypes("cpu")]
    outcome = ("skipped", "no sample ember computes")
    fused = 0
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
                return "wrong", f"{where}: compiled raised {type(err).__name__}: {err}", fused
            if not _same(got, want, _CONTRACTED.get(op.name, 0.0)):
                return "wrong", f"{where}: the compiled result differs from eager ember's", fused
            stats = compiled._stats()
            fused += stats["fused_ops"]
            if stats["breaks"]:
                outcome = ("break", stats["breaks"][0])
            elif outcome[0] != "break":
                outcome = ("replayed", f"{stats['graph_runs']} replays")
    return outcome + (fused,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min", type=int, default=0, help="fewest entries that must replay")
    ap.add_argument("--filter", default="")
    ap.add_argument("--samples", type=int, default=4)
    a = ap.parse_args()
    counts, wrong, fused_ops = {}, [], 0
    for op in oracle.OP_DB:
        if type(op).__name__ not in _ELEMENTWISE or op.name in oracle.RANDOM:
            continue
        name = oracle.entry_id(op)
        if a.filter and not re.search(a.filter, name):
            continue
        status, detail, fused = run_entry(op, a.samples)
        fused_ops += fused
        counts[status] = counts.get(status, 0) + 1
        if status == "wrong":
            wrong.append(f"{name}: {detail}")
        if status == "break":
            print(f"break  {name}: {detail}")
    print("compiled elementwise entries:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
          f"; {fused_ops} traced ops ran fused")
    for w in wrong:
        print("WRONG", w)
    if wrong or counts.get("replayed", 0) < a.min:
        sys.exit(1)


if __name__ == "__main__":
    main()
