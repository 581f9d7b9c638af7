"""Runs PyTorch's OpInfo and ModuleInfo entries against ember (oracle.py) and writes one JSON
file of outcomes; --check compares them with the committed expectations.

    python3 tests/conformance/run.py --out build/conformance.json [--jobs 2] [--samples 8]
        [--filter REGEX] [--check tests/conformance/expected.json]

Entries run in worker processes, one at a time each: a worker that crashes or passes the time
limit costs only its entry (reported as `crash`), and the run goes on with a fresh worker.
"""
import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from labels import ROUNDING  # noqa: E402


def _worker(samples):
    import oracle  # noqa: E402  (imports torch and ember: only in workers)
    ops = {oracle.entry_id(op): op for op in oracle.OP_DB}
    modules = {oracle.module_id(m): m for m in oracle.MODULE_DB}
    print("ready", flush=True)
    for line in sys.stdin:
        kind, name = line.split(None, 1)
        name = name.strip()
        t0 = time.time()
        if kind == "op":
            r = oracle.run_entry(ops[name], limit=samples)
        else:
            r = oracle.run_module(modules[name], limit=samples)
        r["seconds"] = round(time.time() - t0, 2)
        print(json.dumps({"kind": kind, "name": name, **r}), flush=True)


def _entries(pattern, kinds):
    sys.path.insert(0, HERE)
    import oracle  # the parent reads only the names
    out = []
    if "op" in kinds:
        for op in oracle.OP_DB:
            out.append(("op", oracle.entry_id(op), oracle.namespace(op)))
    if "module" in kinds:
        for m in oracle.MODULE_DB:
            out.append(("module", oracle.module_id(m), "nn"))
    if pattern:
        out = [e for e in out if re.search(pattern, e[1])]
    return out


class Worker:
    def __init__(self, args):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--samples",
               str(args.samples)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if self._next(300) != "ready":
            raise RuntimeError("a conformance worker did not start")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def _next(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"

    def run(self, kind, name, timeout):
        self.proc.stdin.write(f"{kind} {name}\n")
        self.proc.stdin.flush()
        line = self._next(timeout)
        if line is None or line == "timeout":
            self.proc.kill()
            self.proc.wait()
            why = (f"no result within {timeout} s" if line == "timeout"
                   else f"the worker died (exit status {self.proc.returncode})")
            return {"kind": kind, "name": name, "forward": ["crash", why]}, False
        return json.loads(line), True

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def run_all(args):
    kinds = {"op", "module"} if args.kind == "all" else {args.kind}
    todo = queue.Queue()
    entries = _entries(args.filter, kinds)
    spaces = {(k, n): s for k, n, s in entries}
    for k, n, _ in entries:
        todo.put((k, n))
    results = []
    lock = threading.Lock()

    def loop():
        w = Worker(args)
        while True:
            try:
                kind, name = todo.get_nowait()
            except queue.Empty:
                break
            r, alive = w.run(kind, name, args.timeout)
            r["namespace"] = spaces[(kind, name)]
            with lock:
                results.append(r)
                if args.verbose:
                    print(f"{r['forward'][0]:8} {name}: {r['forward'][1]}", flush=True)
            if not alive:
                w = Worker(args)
        w.close()

    threads = [threading.Thread(target=loop) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.sort(key=lambda r: (r["kind"], r["name"]))
    return results


def summarise(results):
    s = {}
    for r in results:
        key = r["kind"]
        c = s.setdefault(key, {})
        c[r["forward"][0]] = c.get(r["forward"][0], 0) + 1
        if r.get("gradient"):
            g = s.setdefault("gradient", {})
            g[r["gradient"][0]] = g.get(r["gradient"][0], 0) + 1
    return s


def check(results, expected_path):
    """Fails on any crash, and on any entry the expectations list as passing that no longer
    does. Entries that now pass and are not listed are reported, to be added."""
    with open(expected_path) as f:
        expected = json.load(f)
    problems, gained = [], []
    for r in results:
        for part in ("forward", "gradient"):
            status = (r.get(part) or [None])[0]
            if status is None:
                continue
            key = f"{r['kind']} {r['name']} {part}"
            if status == "crash":
                problems.append(f"{key}: crash: {r[part][1]}")
            elif key in expected["pass"] and status != "pass":
                if status == "wrong" and r[part][1].startswith(ROUNDING):
                    # Not a wrong answer: ember's stays at least as near the float64 result.
                    print(f"rounding differs (not a failure): {key}: {r[part][1]}")
                    continue
                problems.append(f"{key}: expected pass, got {status}: {r[part][1]}")
            elif status == "pass" and key not in expected["pass"]:
                gained.append(key)
    for g in gained:
        print(f"now passes (add it to {os.path.basename(expected_path)}): {g}")
    for p in problems:
        print("FAIL " + p)
    return not problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true")
    p.add_argument("--kind", choices=["op", "module", "all"], default="all")
    p.add_argument("--samples", type=int, default=8, help="samples per dtype (0: all)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=int, default=300, help="seconds per entry")
    p.add_argument("--filter", help="regular expression over entry names")
    p.add_argument("--out")
    p.add_argument("--check", help="expectations file: fail on regressions and crashes")
    p.add_argument("--write-expected", help="write the passing entries to this file")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.worker:
        sys.path.insert(0, HERE)
        _worker(args.samples)
        return 0
    t0 = time.time()
    results = run_all(args)
    summary = summarise(results)
    print(json.dumps(summary), f"in {time.time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"samples": args.samples, "summary": summary, "results": results}, f,
                      indent=1)
    if args.write_expected:
        passing = sorted(f"{r['kind']} {r['name']} {part}" for r in results
                         for part in ("forward", "gradient")
                         if (r.get(part) or [None])[0] == "pass")
        with open(args.write_expected, "w") as f:
            json.dump({"pass": passing}, f, indent=0)
            f.write("\n")
    if args.check:
        return 0 if check(results, args.check) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
