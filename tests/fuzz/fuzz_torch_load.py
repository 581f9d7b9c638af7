"""Fuzzes ember.load(weights_only=True), the reader of torch.save files, in the manner of Atheris
(which Debian does not package): inputs mutated from seeds made by torch.save and ember.save
(byte flips, inserts, deletes, splices, and pickle fragments that name code: os.system, eval,
subprocess), each written as a torch.save zip and loaded. A finding is any exception other than
the clear errors the reader promises (pickle.UnpicklingError, RuntimeError), any input slower than
1 s, and above all any call into the code-running functions, which are replaced by traps.

    PYTHONPATH=build/release/python python3 tests/fuzz/fuzz_torch_load.py [seconds] [findings/]

Exit status 1 when something was found (the inputs are written to the findings folder)."""
import builtins
import io
import os
import pickle
import random
import subprocess
import sys
import time
import zipfile

import ember


class Trap(BaseException):
    """Raised by the code-running functions: never an outcome the reader may reach."""


def _trap(name):
    def trap(*args, **kwargs):
        raise Trap(f"{name} called with {args!r:.200}")
    return trap


def _arm_traps():
    # What a malicious pickle would reach for. (exec and __import__ stay: Python's own import
    # machinery runs through them, for the zip reader's codecs among others.)
    os.system = _trap("os.system")
    os.popen = _trap("os.popen")
    os.execv = _trap("os.execv")
    subprocess.Popen = _trap("subprocess.Popen")
    subprocess.run = _trap("subprocess.run")
    subprocess.check_output = _trap("subprocess.check_output")
    builtins.eval = _trap("eval")


FRAGMENTS = [
    b"cposix\nsystem\n", b"cos\nsystem\n", b"cbuiltins\neval\n", b"c__builtin__\neval\n",
    b"csubprocess\nPopen\n", b"cbuiltins\ngetattr\n", b"ctorch\nFloatStorage\n",
    b"ctorch._utils\n_rebuild_tensor_v2\n", b"ccollections\nOrderedDict\n", b"(X\x02\x00\x00\x00idtp",
    b"\x85R", b"\x86R", b"\x87R", b"b", b"}q\x00", b"]q\x00", b"Q", b"\x81", b"\x93",
    b"\x8c\x05posix\x8c\x06system\x93", b"K\xff", b"J\xff\xff\xff\x7f", b"\x8a\x08" + b"\xff" * 8,
]


def _seeds():
    import torch  # PyTorch's own writer makes half of the seeds
    out = []
    objs = [torch.ones(3), {"w": torch.randn(2, 3), "b": torch.zeros(2)},
            torch.nn.Linear(3, 2).state_dict(), [torch.arange(6).reshape(2, 3)[:, 1:], 1, "x"],
            {"p": torch.nn.Parameter(torch.ones(2)), "size": torch.Size([1, 2]),
             "dtype": torch.float16, "set": {1, 2}, "bytes": b"ab"}]
    for o in objs:
        buf = io.BytesIO()
        torch.save(o, buf)
        out.append(buf.getvalue())
    for o in [ember.ones(3), {"w": ember.randn(2, 3)}, ember.nn.Linear(3, 2).state_dict()]:
        buf = io.BytesIO()
        ember.save(o, buf)
        out.append(buf.getvalue())
    return out


def _parts(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def _zip(parts):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for n, d in parts.items():
            z.writestr(n, d)
    return buf.getvalue()


def _mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        i = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(i, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[i:i] = bytes([rng.randrange(256)])
        elif op == 2 and data:
            del data[i:i + rng.randint(1, 8)]
        elif op == 3:
            data[i:i] = rng.choice(FRAGMENTS)
        elif op == 4 and data:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randint(1, 16)]
        else:
            data = data[:i]
    return bytes(data)


def one_input(rng, seeds):
    parts = _parts(rng.choice(seeds))
    names = list(parts)
    target = rng.choice([n for n in names if n.endswith("data.pkl")] * 4 + names)
    parts[target] = _mutate(rng, parts[target])
    if rng.random() < 0.1:
        return _mutate(rng, _zip(parts))  # the container itself
    return _zip(parts)


def run(seconds, findings):
    rng = random.Random(int(os.environ.get("FUZZ_SEED", "0")))
    seeds = _seeds()
    import encodings.cp437  # noqa: F401  (the zip reader's, imported before the traps)
    _arm_traps()
    deadline = time.time() + seconds
    runs = found = 0
    outcomes = {}
    while time.time() < deadline:
        data = one_input(rng, seeds)
        runs += 1
        t0 = time.time()
        problem = None
        try:
            ember.load(io.BytesIO(data), weights_only=True)
            outcome = "loaded"
        except (pickle.UnpicklingError, RuntimeError) as err:
            outcome = type(err).__name__
        except Trap as err:
            problem = f"code ran: {err}"
        except RecursionError:
            outcome = "RecursionError"  # a deeply nested pickle: Python's own limit, no harm
        except Exception as err:  # noqa: BLE001
            problem = f"unexpected {type(err).__name__}: {err}"
        if problem is None and time.time() - t0 > 1.0:
            problem = f"slow: {time.time() - t0:.1f} s"
        if problem:
            found += 1
            os.makedirs(findings, exist_ok=True)
            name = os.path.join(findings, f"finding-{found}.pt")
            with open(name, "wb") as f:
                f.write(data)
            print(f"FINDING {name}: {problem}", flush=True)
        else:
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"torch_load: {runs} runs in {seconds} s, {found} findings, outcomes {outcomes}")
    return found == 0


if __name__ == "__main__":
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    findings = sys.argv[2] if len(sys.argv) > 2 else "build/fuzz/findings/torch_load"
    sys.exit(0 if run(seconds, findings) else 1)
