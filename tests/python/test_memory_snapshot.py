"""The allocator's history and snapshots in PyTorch's format (ember.cpu.memory here; ember.cuda.memory
is the same code over GPUs), read back by PyTorch 1.13's own viewer, torch.cuda._memory_viz."""
import pickle

import pytest
import torch.cuda._memory_viz as memory_viz

import ember
from ember.cpu import memory


def test_history_records_allocations_and_releases_in_pytorchs_format(tmp_path):
    memory._record_memory_history(max_entries=100000)
    try:
        kept = ember.zeros(512, 1024)  # 2 MiB, alive at the snapshot
        gone = ember.ones(256, 1024)   # 1 MiB, released before it
        gone_addr = gone.data_ptr()
        del gone
        snap = memory._snapshot()
        path = tmp_path / "snapshot.pickle"
        memory._dump_snapshot(str(path))
    finally:
        memory._record_memory_history(enabled=None)
    assert set(snap) == {"segments", "device_traces"}
    trace = snap["device_traces"][0]
    assert {"action", "addr", "size", "stream", "time_us", "frames"} <= set(trace[0])
    allocs = [e for e in trace if e["action"] == "alloc" and e["addr"] == gone_addr]
    frees = [e for e in trace if e["action"] == "free_completed" and e["addr"] == gone_addr]
    assert allocs and frees and allocs[-1]["size"] >= 256 * 1024 * 4
    assert trace.index(allocs[-1]) < trace.index(frees[-1])
    # The segment that holds the live tensor, block by block.
    live = [b for s in snap["segments"] for b in s["blocks"] if b["address"] == kept.data_ptr()]
    assert len(live) == 1 and live[0]["state"] == "active_allocated"
    assert live[0]["requested_size"] == 512 * 1024 * 4
    for s in snap["segments"]:
        assert s["total_size"] == sum(b["size"] for b in s["blocks"])
        assert s["segment_type"] in ("small", "large")
    assert pickle.loads(path.read_bytes()).keys() == snap.keys()
    # PyTorch's viewer reads the segments: totals per state, and a flame graph of the blocks.
    stats = memory_viz.stats(snap["segments"])
    assert stats["segments"] == len(snap["segments"])
    assert stats["active_allocated"].value >= 512 * 1024 * 4
    lines = memory_viz.segments(snap["segments"], format_flamegraph=lambda text: text)
    assert "active_allocated" in lines
    # Each allocation names the Python line that made it, in the snapshot's frame format; the
    # viewer's flame graph of the blocks shows it.
    made_here = test_history_records_allocations_and_releases_in_pytorchs_format.__code__
    for frames in (live[0]["frames"], live[0]["history"][0]["frames"], allocs[-1]["frames"]):
        assert frames and set(frames[0]) == {"filename", "line", "name"}, frames
        assert any(f["name"] == made_here.co_name and f["filename"].endswith(
            "test_memory_snapshot.py") and f["line"] > made_here.co_firstlineno
            for f in frames[:2]), frames
    assert made_here.co_name in lines
    del kept


def test_history_without_context_keeps_no_frames():
    memory._record_memory_history(context=None, max_entries=1000)
    try:
        t = ember.zeros(300, 1000)
        trace = memory._snapshot()["device_traces"][0]
    finally:
        memory._record_memory_history(enabled=None)
    assert [e for e in trace if e["addr"] == t.data_ptr()]
    assert all(e["frames"] == [] for e in trace)


def test_history_off_forgets_and_bad_arguments_are_errors():
    memory._record_memory_history(True)  # PyTorch 1.13's spelling
    ember.zeros(64)
    assert memory._snapshot()["device_traces"][0]
    memory._record_memory_history(False)
    assert memory._snapshot()["device_traces"][0] == []
    with pytest.raises(ValueError, match="enabled must be"):
        memory._record_memory_history("sometimes")
    with pytest.raises(ValueError, match="context must be"):
        memory._record_memory_history(context="everything")
    with pytest.raises(ValueError, match="expected a cpu device"):
        memory._snapshot(device="cuda:0")


def test_cuda_memory_without_a_gpu_says_why():
    if ember.cuda.is_available():
        pytest.skip("a GPU is here: scripts/gpu-check runs the CUDA side")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        ember.cuda.memory._snapshot()
