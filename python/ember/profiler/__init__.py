"""torch.profiler's API over ember's profiler (ember/profiler/ in C++): every op is recorded from
its entry line, with backward nodes, record_function ranges, optimizer steps, DataLoader waits
and collectives; key_averages().table() and export_chrome_trace() as in PyTorch.

    with ember.profiler.profile(record_shapes=True) as prof:
        with ember.profiler.record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")      # chrome://tracing or ui.perfetto.dev

What it records: the calling thread and the threads ember starts for it (DataParallel replicas,
DataLoader workers, run_threads' ranks). With ProfilerActivity.CUDA on a GPU, CUPTI's records of
the kernels, copies and memsets join them, timed by the device, each linked to the op that
launched it (the table's CUDA columns; the trace's GPU lanes, one per stream). with_stack=True
keeps the Python frames that called each op and range (FunctionEvent.stack,
key_averages(group_by_stack_n=N), export_stacks, "Call stack" in the trace); what runs on
threads without Python frames (backward, DataParallel's replicas) has none.
"""
import enum
import functools
import os
import socket
import time

from .. import _C

_P = _C._profiler

__all__ = ["ProfilerActivity", "ProfilerAction", "profile", "schedule", "record_function",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    acts = {ProfilerActivity.CPU}
    if _C._cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: skip_first steps, then cycles of wait, warmup and active steps,
    repeat times (0: until the profile stops). Returns the step -> ProfilerAction function."""
    for name, v, least in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                           ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
        if not isinstance(v, int) or v < least:
            raise ValueError(f"schedule: expected {name} to be an int >= {least}, got {v!r}")

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    schedule_fn._ember_schedule = [wait, warmup, active, repeat, skip_first]
    return schedule_fn


class FunctionEventAvg:
    """One row of key_averages(); times in microseconds, as PyTorch's."""

    def __init__(self, d):
        self.key = d["key"]
        self.count = d["count"]
        self.cpu_time_total = d["cpu_time_total_ns"] / 1000.0
        self.self_cpu_time_total = d["self_cpu_time_total_ns"] / 1000.0
        self.cpu_time = self.cpu_time_total / self.count if self.count else 0.0
        self.cpu_memory_usage = d["cpu_memory_usage"]
        self.self_cpu_memory_usage = d["self_cpu_memory_usage"]
        self.input_shapes = d["input_shapes"]
        self.stack = d["stack"]
        self.cuda_time_total = d["cuda_time_total_ns"] / 1000.0
        self.self_cuda_time_total = d["self_cuda_time_total_ns"] / 1000.0
        self.cuda_time = self.cuda_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time_total:.3f}us count={self.count}>")


class FunctionEvent:
    """One recorded event; times in microseconds from the steady clock."""

    def __init__(self, d):
        self.name = self.key = d["name"]
        self.kind = d["kind"]
        self.time_range_start = d["start_ns"] / 1000.0
        self.time_range_end = d["end_ns"] / 1000.0
        self.cpu_time_total = self.time_range_end - self.time_range_start
        self.thread = d["thread"]
        self.sequence_nr = d["sequence_nr"]
        self.device = d["device"]
        self.input_shapes = d["input_shapes"]
        self.input_types = d["input_types"]
        self.stack = d["stack"]
        self.device_type = "cuda" if d["on_device"] else "cpu"
        self.id = d["id"]
        self.launched_by = d["launched_by"]  # on_device: the id of the op that launched it

    def __repr__(self):
        return f"<FunctionEvent {self.name} {self.cpu_time_total:.3f}us thread={self.thread}>"


class EventList(list):
    """key_averages()'s and events()'s list, with PyTorch's table()."""

    def __init__(self, items, profile=None, group_by_input_shape=False, group_by_stack_n=0):
        super().__init__(items)
        self._profile = profile
        self._group = group_by_input_shape
        self._stack_n = group_by_stack_n

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        if self._profile is None:
            raise RuntimeError("table(): this list does not come from a profile")
        key = sort_by or "cpu_time_total"
        text = self._profile.table(key, -1 if row_limit is None else row_limit, self._group,
                                   self._stack_n)
        return (header + "\n" + text) if header else text

    def total_average(self):
        total = FunctionEventAvg({"key": "Total", "count": 0, "cpu_time_total_ns": 0,
                                  "self_cpu_time_total_ns": 0, "cpu_memory_usage": 0,
                                  "self_cpu_memory_usage": 0, "input_shapes": ""})
        for e in self:
            total.count += getattr(e, "count", 1)
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += getattr(e, "self_cpu_time_total", 0.0)
        return total

    def export_chrome_trace(self, path):
        self._profile.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._profile.export_stacks(os.fspath(path), metric)


class profile:
    """torch.profiler.profile: a context manager (or start()/stop()), step() for schedules."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        self.activities = set(activities) if activities else supported_activities()
        for a in self.activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got {a!r}")
        self.record_shapes, self.profile_memory, self.with_stack = \
            record_shapes, profile_memory, with_stack
        self.on_trace_ready = on_trace_ready
        steps = None
        if schedule is not None:
            steps = getattr(schedule, "_ember_schedule", None)
            if steps is None:
                raise NotImplementedError(
                    "profile(schedule=...): ember runs schedules made by ember.profiler.schedule "
                    "(torch.profiler.schedule); an arbitrary step function is not supported yet")
        ready = None if on_trace_ready is None else (lambda: on_trace_ready(self))
        self._p = _P.Profile(record_shapes=record_shapes, profile_memory=profile_memory,
                             with_stack=with_stack, schedule=steps, on_trace_ready=ready)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._p.start()

    def stop(self):
        self._p.stop()

    def step(self):
        self._p.step()

    @property
    def step_num(self):
        return self._p.step_num

    def events(self):
        return EventList([FunctionEvent(d) for d in self._p.events()], self._p)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        rows = [FunctionEventAvg(d)
                for d in self._p.key_averages(group_by_input_shape, group_by_stack_n)]
        return EventList(rows, self._p, group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        self._p.export_chrome_trace(os.fspath(path))

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph input (flamegraph.pl, speedscope): one line per event recorded with its
        stack (with_stack=True), "outer;...;inner microseconds", as PyTorch writes them."""
        self._p.export_stacks(os.fspath(path), metric)


class record_function:
    """A named range in the profile: a context manager or a decorator."""

    def __init__(self, name, args=None):
        self.name = name if args is None else f"{name}({args})"
        self._range = None

    def __enter__(self):
        self._range = _P.UserRange(self.name)
        self._range.enter()
        return self

    def __exit__(self, *exc):
        if self._range is not None:
            self._range.exit()
            self._range = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready that writes each trace as DIR/WORKER.TIME.pt.trace.json(.gz), the files
    TensorBoard's profiler plugin reads."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        stamp = time.time_ns() // 1000000  # PyTorch's milliseconds, made unique within one
        while any(os.path.exists(os.path.join(dir_name, f"{worker}.{stamp}.pt.trace.json{z}"))
                  for z in ("", ".gz")):
            stamp += 1
        path = os.path.join(dir_name, f"{worker}.{stamp}.pt.trace.json")
        if use_gzip:
            import gzip
            with gzip.open(path + ".gz", "wt") as f:
                f.write(prof._p.chrome_trace())
        else:
            prof.export_chrome_trace(path)
    return handler
