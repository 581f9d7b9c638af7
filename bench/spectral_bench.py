#!/usr/bin/python3
"""torch.fft, torch.linalg and complex arithmetic: ember against PyTorch 1.13 (Debian's
python3-torch) on the same inputs, in one run, one thread each. Each case is timed best of 5
repeats, ember and PyTorch alternating; the ratio is ember / PyTorch (< 1: ember is faster).

  PYTHONPATH=build/release/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/spectral_bench.py \
      [--json F]
"""
import argparse
import json
import timeit

import torch

import ember


def cases():
    g = torch.Generator().manual_seed(0)
    sig = torch.randn(64, 4096, generator=g)
    img = torch.randn(16, 256, 256, generator=g)
    cplx = torch.randn(64, 4096, dtype=torch.complex64, generator=g)
    odd = torch.randn(64, 1000, generator=g)  # not a power of two: Bluestein/mixed radix
    sq = {n: torch.randn(n, n, dtype=torch.float64, generator=g) for n in (64, 256)}
    spd = {n: m @ m.mT + n * torch.eye(n, dtype=torch.float64) for n, m in sq.items()}
    rhs = torch.randn(256, 16, dtype=torch.float64, generator=g)
    cm = torch.randn(256, 256, dtype=torch.complex64, generator=g)
    yield "fft.fft (64, 4096) complex64", "fft.fft", (cplx,)
    yield "fft.rfft (64, 4096) float32", "fft.rfft", (sig,)
    yield "fft.irfft (64, 2049) complex64", "fft.irfft", (torch.fft.rfft(sig),)
    yield "fft.rfft (64, 1000) float32", "fft.rfft", (odd,)
    yield "fft.fft2 (16, 256, 256) float32", "fft.fft2", (img,)
    yield "fft.rfftn (16, 256, 256) float32", "fft.rfftn", (img,)
    yield "complex64 mul (64, 4096)", "mul", (cplx, cplx)
    yield "complex64 exp (64, 4096)", "exp", (cplx,)
    yield "complex64 abs (64, 4096)", "abs", (cplx,)
    yield "complex64 matmul 256", "matmul", (cm, cm)
    for n in (64, 256):
        yield f"linalg.det {n} float64", "linalg.det", (sq[n],)
        yield f"linalg.inv {n} float64", "linalg.inv", (sq[n],)
        yield f"linalg.cholesky {n} float64", "linalg.cholesky", (spd[n],)
        yield f"linalg.qr {n} float64", "linalg.qr", (sq[n],)
        yield f"linalg.svd {n} float64", "linalg.svd", (sq[n],)
        yield f"linalg.eigh {n} float64", "linalg.eigh", (spd[n],)
        yield f"linalg.matrix_exp {n} float64", "linalg.matrix_exp", (sq[n] / n,)
    yield "linalg.solve 256 x 16 float64", "linalg.solve", (sq[256], rhs)
    yield "linalg.lstsq 256 x 16 float64", "linalg.lstsq", (sq[256], rhs)
    # Complex matrices: LAPACK's z routines.
    zsq = torch.randn(128, 128, dtype=torch.complex128, generator=g)
    zpd = zsq @ zsq.mH + 128 * torch.eye(128, dtype=torch.complex128)
    for op, arg in [("det", zsq), ("inv", zsq), ("cholesky", zpd), ("qr", zsq), ("svd", zsq),
                    ("eigh", zpd), ("eig", zsq), ("matrix_exp", zsq / 128)]:
        yield f"linalg.{op} 128 complex128", f"linalg.{op}", (arg,)


def lookup(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def to_ember(t):
    return ember.from_numpy(t.numpy().copy())


def measure(number):
    rows = []
    for label, name, args in cases():
        fns = {"torch": (lookup(torch, name), args),
               "ember": (lookup(ember, name), tuple(to_ember(a) for a in args))}
        best = {}
        for lib in ["ember", "torch"] * 2:
            fn, a = fns[lib]
            fn(*a)  # warm
            t = min(timeit.repeat(lambda: fn(*a), number=number, repeat=5)) / number
            best[lib] = min(best.get(lib, t), t)
        rows.append({"case": label, "ember_ms": best["ember"] * 1e3,
                     "torch_ms": best["torch"] * 1e3, "ratio": best["ember"] / best["torch"]})
        print(f"{label:38s} ember {best['ember'] * 1e3:9.3f} ms  torch "
              f"{best['torch'] * 1e3:9.3f} ms  ratio {best['ember'] / best['torch']:.2f}",
              flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=5, help="calls per repeat")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    rows = measure(args.number)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
