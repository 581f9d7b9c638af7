"""FullyShardedDataParallel from a program written against PyTorch's API (fsdp_program.py), run
as torchrun would run it (`ember launch` starting `python -m ember.run`): under every sharding
strategy it gives DDP's losses (float64: 1e-10, float32: 1e-5 relative) with 1/N of the
parameters per rank; and the API around it (fsdp_worker.py): summon_full_params, state dict
types, no_sync, auto-wrap policies, clip_grad_norm_."""
import functools
import os
import re
import subprocess
import sys

import pytest

from conftest import binary_dir
from test_distributed import free_port

HERE = os.path.dirname(__file__)


def launch(nproc, script, *args, env=None, timeout=240, check=True):
    ember_cli = os.path.join(binary_dir(), "tools", "ember")
    if not os.path.exists(ember_cli):
        pytest.skip("needs the ember command (tools/ember) of this build")
    r = subprocess.run([ember_cli, "launch", "--nproc-per-node", str(nproc), "--master-port",
                        str(free_port()), sys.executable, "-m", "ember.run",
                        os.path.join(HERE, script), *args],
                       capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    if not check:
        return r
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def losses(out):
    return [float(x) for x in re.findall(r"step \d+ loss ([0-9.eE+-]+)", out)]


def held(out):
    return {int(r): (int(h), int(t))
            for r, h, t in re.findall(r"rank (\d+) holds (\d+) of (\d+) parameter", out)}


@functools.lru_cache(maxsize=None)
def ddp_losses(world, dtype):
    """DDP's losses, run once per world size and dtype for every mode compared with them."""
    return losses(launch(world, "fsdp_program.py", "ddp", "--dtype", dtype))


@pytest.mark.parametrize("world,dtype,rtol", [(2, "float32", 1e-5), (4, "float64", 1e-10)])
@pytest.mark.parametrize("mode", ["full_shard", "full_shard_prefetch", "shard_grad_op",
                                  "no_shard", "hybrid_shard",
                                  "fully_shard", "fully_shard_grad_op", "fully_shard_hsdp"])
def test_fsdp_gives_ddps_losses(mode, world, dtype, rtol):
    if mode == "fully_shard_hsdp" and world < 4:
        pytest.skip("HSDP's mesh needs 2 x 2 ranks")
    fsdp = launch(world, "fsdp_program.py", mode, "--dtype", dtype)
    expected, got = ddp_losses(world, dtype), losses(fsdp)
    assert len(got) == len(expected) == 4, fsdp
    assert got == pytest.approx(expected, rel=rtol), (got, expected)
    assert "state 29 keys, 30080 elements" in fsdp  # the full state dict, tied weights twice
    counts = held(fsdp)
    assert len(counts) == world
    for rank, (mine, total) in counts.items():
        # 1/N of the parameters (HSDP: of a pair), up to each unit's padding to a multiple of N
        shards = {"no_shard": 1, "fully_shard_hsdp": 2}.get(mode, world)
        if mode == "hybrid_shard":
            shards = 2  # pairs of ranks (a 2 x 2 mesh at 4 ranks; the machine's 2 at 2)
        assert total / shards <= mine <= total / shards + 64 * shards, (rank, mine, total)


def test_mixed_precision_computes_in_bfloat16_and_keeps_float32_shards():
    ddp = ddp_losses(2, "float32")
    mp = launch(2, "fsdp_program.py", "full_shard_mp")
    got = losses(mp)
    assert got == pytest.approx(ddp, rel=2e-2), (got, ddp)
    assert got != pytest.approx(ddp, rel=1e-6)  # it did compute in bfloat16


# fully_shard's cap is 416 MiB: at 384 its backward failed in about one run of six (2026-11-29:
# "tried to allocate 6.01 MiB ... 332.78 MiB allocated, 35.22 MiB reserved but unallocated, the
# largest free cached block 4.99 MiB": fragmentation, with the prefetched gather's timing). DDP is
# out of memory at both caps (measured up to 416 MiB).
@pytest.mark.parametrize("mode,cap", [("full_shard", "384MiB"), ("fully_shard", "416MiB")])
def test_sharding_trains_where_ddp_is_out_of_memory(mode, cap):
    # A 25M-parameter GPT under AdamW on 2 ranks capped at 384 MiB each (as a device would be):
    # DDP needs about 16 bytes a parameter per rank (400 MB), FULL_SHARD about half.
    cap = {"EMBER_CPU_MEMORY_LIMIT": cap}
    size = ["--width", "512", "--layers", "8", "--steps", "2"]
    ddp = launch(2, "fsdp_program.py", "ddp", *size, env=cap, check=False)
    assert ddp.returncode != 0 and "out of memory" in ddp.stdout + ddp.stderr, ddp.stdout
    fsdp = launch(2, "fsdp_program.py", mode, *size, env=cap)
    assert len(losses(fsdp)) == 2, fsdp
    assert all(mine <= total * 0.55 for mine, total in held(fsdp).values()), fsdp


@pytest.mark.parametrize("case", ["summon", "state_dicts", "no_sync", "policies", "errors",
                                  "fully_shard_api", "optim_state"])
def test_fsdp_api(case):
    out = launch(2, "fsdp_worker.py", case)
    assert out.count(f"{case} ok") == 2, out
