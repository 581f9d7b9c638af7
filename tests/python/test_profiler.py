"""ember.profiler against torch.profiler's API (PyTorch 1.13 runs the same code as the oracle of
names and shapes): the context manager, record_function (context and decorator), key_averages
and table, events with shapes, backward linked to forward, schedule with on_trace_ready and
tensorboard_trace_handler, export_chrome_trace as JSON, and a torch program under ember.run."""
import json
import os
import subprocess
import sys

import pytest
import torch

import ember
from ember import nn
from ember.profiler import (ProfilerActivity, profile, record_function, schedule,
                            tensorboard_trace_handler)


def step(model, opt, x):
    with record_function("forward"):
        loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()


def test_profile_records_ops_backward_optimizer_and_user_ranges():
    model = nn.Linear(8, 4)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(16, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step(model, opt, x)
    names = {e.name for e in prof.events()}
    assert {"forward", "Optimizer.step#SGD.step"} <= names, names
    assert any(n.endswith("Backward0") for n in names), names
    # nn.Linear's product, with the shapes it was called with.
    product = [e for e in prof.events() if e.name in ("linear", "addmm")][0]
    assert "[16, 8]" in product.input_shapes, product.input_shapes
    # The backward node of an op carries the op's sequence number.
    fwd = {e.sequence_nr for e in prof.events() if e.kind == "op"}
    bwd = {e.name: e for e in prof.events() if e.kind == "backward"}
    for name in ("AddmmBackward0", "SumBackward0"):
        assert bwd[name].sequence_nr in fwd, name
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["forward"].count == 1
    assert rows["forward"].cpu_time_total >= rows["forward"].self_cpu_time_total >= 0
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "Self CPU %" in table and "# of Calls" in table and "Self CPU time total:" in table
    assert len([l for l in table.splitlines() if l and not l.startswith("-")]) == 1 + 5 + 1
    grouped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in grouped and "[16, 8]" in grouped
    with pytest.raises(Exception, match="expected sort_by one of"):
        prof.key_averages().table(sort_by="fastest")


def test_torch_profiler_shape_of_api_matches():
    # The same calls PyTorch 1.13 takes, so that programs written for it run unchanged.
    for lib in (torch, ember):
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  record_shapes=True, profile_memory=True) as prof:
            with lib.profiler.record_function("block"):
                lib.ones(64, 64).matmul(lib.ones(64, 64))
        avg = prof.key_averages()
        assert any(r.key == "block" and r.count == 1 for r in avg)
        assert isinstance(avg.table(sort_by="cpu_time_total", row_limit=3), str)


def test_record_function_as_decorator_and_memory(tmp_path):
    @record_function("make")
    def make():
        return ember.zeros(256, 1024)

    with profile(profile_memory=True) as prof:
        make()
    row = [r for r in prof.key_averages() if r.key == "make"][0]
    assert row.cpu_memory_usage >= 256 * 1024 * 4
    assert "CPU Mem" in prof.key_averages().table(sort_by="cpu_memory_usage")
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    phases = {e["ph"] for e in trace["traceEvents"]}
    assert {"X", "i", "C", "M"} <= phases
    assert any(e["ph"] == "X" and e["name"] == "make" for e in trace["traceEvents"])


def _linear_forward(lib, model, x):
    return model(x).relu().sum()  # the line the stacks below must name


def test_with_stack_names_the_python_line_of_each_op(tmp_path):
    # PyTorch 1.13 runs the same code: the same attributes and files, frames innermost first.
    # (PyTorch names a function's first line, ember the line running in it.)
    first = _linear_forward.__code__.co_firstlineno
    for lib in (torch, ember):
        where = f"{os.path.basename(__file__)}({first + (lib is ember)}): _linear_forward"
        model, x = lib.nn.Linear(8, 4), lib.randn(16, 8)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU],
                                  with_stack=True) as prof:
            _linear_forward(lib, model, x)
        relu = [e for e in prof.events() if e.name in ("aten::relu", "relu")][0]
        assert any(f.endswith(where) for f in relu.stack[:3]), (lib.__name__, relu.stack)
        # Grouped by the innermost frames: the op's row carries them, the table shows them.
        rows = [r for r in prof.key_averages(group_by_stack_n=5)
                if r.key in ("aten::relu", "relu")]
        assert rows and any(f.endswith(where) for f in rows[0].stack), rows[0].stack
        table = prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total",
                                                            row_limit=20)
        assert "Source Location" in table and "_linear_forward" in table, table
        out = tmp_path / f"{lib.__name__}.stacks"
        prof.export_stacks(str(out), "self_cpu_time_total")
        # Flame-graph lines: "outer;...;inner microseconds" (spaces inside frames are '_').
        lines = out.read_text().splitlines()
        assert lines and all(l.rsplit(" ", 1)[1].isdigit() for l in lines), lines[:3]
        assert any("_linear_forward" in l for l in lines), lines[:3]
    # ember's trace carries the frames; without with_stack there are none.
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    stacks = [e["args"]["Call stack"] for e in json.loads(trace.read_text())["traceEvents"]
              if e.get("name") == "relu"]
    assert stacks and "_linear_forward" in stacks[0]
    with profile() as plain:
        _linear_forward(ember, model, x)
    assert all(not e.stack for e in plain.events())


def test_schedule_and_tensorboard_trace_handler(tmp_path):
    ready = []
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w0")
    model = nn.Linear(4, 4)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(2, 4)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: (ready.append(p.step_num), handler(p))) as prof:
        for _ in range(10):
            step(model, opt, x)
            prof.step()
    assert ready == [4, 8]  # after the last active step of each of the two cycles
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json")
                                   for f in files)
    json.loads((tmp_path / files[0]).read_text())
    for bad in (dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=0, active=0)):
        with pytest.raises(ValueError):
            schedule(**bad)


def test_a_torch_program_profiles_under_ember_run(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch\n"
        "from torch.profiler import profile, record_function, ProfilerActivity\n"
        "model = torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.ReLU())\n"
        "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:\n"
        "    with record_function('model_inference'):\n"
        "        model(torch.randn(5, 10))\n"
        "print(prof.key_averages().table(sort_by='cpu_time_total', row_limit=10))\n")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "ember.run", str(program)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "model_inference" in r.stdout and "addmm" in r.stdout, r.stdout
