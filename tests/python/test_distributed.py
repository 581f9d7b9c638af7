"""ember.distributed from Python: processes started by `ember launch` (as torchrun starts them)
join a Gloo group by env://, run collectives and DDP, and a rank that dies is an error in the others
within seconds."""
import os
import random
import socket
import subprocess
import sys
import time

import pytest

from conftest import binary_dir

WORKER = os.path.join(os.path.dirname(__file__), "dist_worker.py")


def free_port():
    """A port that is free now, below Linux's ephemeral range (32768 and up), where Gloo's own
    sockets take theirs."""
    for _ in range(100):
        port = random.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def launch(mode, nproc=2, timeout=120):
    ember_cli = os.path.join(binary_dir(), "tools", "ember")
    if not os.path.exists(ember_cli):
        pytest.skip("needs the ember command (tools/ember) of this build")
    start = time.monotonic()
    r = subprocess.run([ember_cli, "launch", "--nproc-per-node", str(nproc), "--master-port",
                        str(free_port()), sys.executable, WORKER, mode],
                       capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - start


def test_collectives():
    r, _ = launch("collectives", nproc=3)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(f"rank {i} ok" in r.stdout for i in range(3))


def test_ddp_matches_one_process_on_the_whole_batch():
    r, _ = launch("ddp")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 0 ok" in r.stdout and "rank 1 ok" in r.stdout


def test_sync_batchnorm_equals_batchnorm_on_the_whole_batch():
    r, _ = launch("sync_batchnorm")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 0 ok" in r.stdout and "rank 1 ok" in r.stdout


def test_a_dead_rank_is_an_error_within_seconds():
    # The ranks are started here, not by `ember launch` (which would end rank 0 as soon as rank 1
    # died): what is measured is rank 0 finding out by itself.
    port = free_port()
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, WORKER, "dead_rank"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                       RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r)))
             for r in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    seconds = time.monotonic() - start
    assert procs[1].returncode == 3 and procs[0].returncode == 0, outs
    assert "rank 0 saw:" in outs[0] and "rank 1" in outs[0].split("rank 0 saw:")[1], outs[0]
    assert seconds < 30, seconds
