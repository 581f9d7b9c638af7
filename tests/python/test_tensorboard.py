"""ember.utils.tensorboard.SummaryWriter: the event files it writes are read back by a decoder
written here (TFRecord framing with both CRC-32Cs checked, then the protobuf wire format) and
every field is compared with what torch.utils.tensorboard writes: tags, steps, wall times,
values, histogram buckets (from NumPy), text, and the file_version record first."""
import glob
import os
import re
import socket
import struct

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard._record import crc32c


# ---- a reader, independent of the writer ----

def crc32c_bitwise(data):
    """CRC-32C bit by bit (the writer's is table-driven)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path):
    data = open(path, "rb").read()
    records, i = [], 0
    while i < len(data):
        header = data[i:i + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[i + 8:i + 12])[0] == masked(crc32c_bitwise(header))
        body = data[i + 12:i + 12 + length]
        assert len(body) == length
        assert struct.unpack("<I", data[i + 12 + length:i + 16 + length])[0] == masked(
            crc32c_bitwise(body))
        records.append(body)
        i += 16 + length
    return records


def read_varint(data, i):
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def fields(data):
    """{field number: [raw value, ...]}: ints for varints, bytes for the other wire types."""
    out, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 2:
            n, i = read_varint(data, i)
            value, i = data[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        out.setdefault(number, []).append((wire, value))
    return out


def one(f, number, wire):
    (w, value), = f[number]
    assert w == wire
    return value


def double(f, number, default=None):
    if number not in f:
        return default
    return struct.unpack("<d", one(f, number, 1))[0]


def packed_doubles(f, number):
    if number not in f:
        return []
    data = one(f, number, 2)
    return list(struct.unpack("<%dd" % (len(data) // 8), data))


def int64(f, number):
    if number not in f:
        return 0
    value = one(f, number, 0)
    return value - (1 << 64) if value >= 1 << 63 else value


def decode_event(data):
    """An Event as a dict; summary values decoded by their oneof member."""
    f = fields(data)
    assert set(f) <= {1, 2, 3, 5, 7}, f
    event = {"wall_time": double(f, 1, 0.0), "step": int64(f, 2)}
    if 3 in f:
        event["file_version"] = one(f, 3, 2).decode()
    if 7 in f:
        event["session_log"] = int64(fields(one(f, 7, 2)), 1)
    if 5 in f:
        values = []
        for wire, raw in fields(one(f, 5, 2)).get(1, []):
            v = fields(raw)
            value = {"tag": one(v, 1, 2).decode()}
            if 2 in v:
                value["simple_value"] = struct.unpack("<f", one(v, 2, 5))[0]
            if 5 in v:
                h = fields(one(v, 5, 2))
                value["histo"] = {
                    "min": double(h, 1, 0.0), "max": double(h, 2, 0.0), "num": double(h, 3, 0.0),
                    "sum": double(h, 4, 0.0), "sum_squares": double(h, 5, 0.0),
                    "bucket_limit": packed_doubles(h, 6), "bucket": packed_doubles(h, 7)}
            if 8 in v:
                t = fields(one(v, 8, 2))
                tensor = {"dtype": int64(t, 1)}
                if 2 in t:
                    tensor["shape"] = [int64(fields(d), 1) for _, d in fields(one(t, 2, 2))[2]]
                if 5 in t:
                    data = one(t, 5, 2)
                    tensor["float_val"] = list(struct.unpack("<%df" % (len(data) // 4), data))
                if 6 in t:
                    tensor["double_val"] = packed_doubles(t, 6)
                if 8 in t:
                    tensor["string_val"] = [s for _, s in t[8]]
                value["tensor"] = tensor
            if 9 in v:
                plugin = fields(one(fields(one(v, 9, 2)), 1, 2))
                value["plugin_name"] = one(plugin, 1, 2).decode()
                assert 2 not in plugin  # TextPluginData(version=0) encodes to nothing
            values.append(value)
        event["summary"] = values
    return event


def event_files(directory):
    return sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*")))


def read_events(directory):
    files = event_files(directory)
    assert len(files) == 1, files
    events = [decode_event(r) for r in read_records(files[0])]
    assert events[0]["file_version"] == "brain.Event:2" and "summary" not in events[0]
    return events[1:]


# ---- the tests ----

def test_crc32c():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    data = np.random.default_rng(0).integers(0, 256, 1000, dtype=np.uint8).tobytes()
    assert crc32c(data) == crc32c_bitwise(data)
    assert crc32c(data[500:], crc32c(data[:500])) == crc32c(data)


def test_scalars(tmp_path):
    values = [0.5, -0.0, 0.0, 3, np.float32(2.25), np.float64(1e-3), ember.tensor(4.5),
              ember.tensor([7.25]), np.array([[1.5]])]
    with SummaryWriter(str(tmp_path)) as w:
        for i, v in enumerate(values):
            w.add_scalar("train/loss", v, global_step=i, walltime=1000.0 + i / 4)
        w.add_scalar("big step", 1.0, global_step=np.int64(2 ** 40), walltime=5.0)
        w.add_scalar("no step", 2.0, walltime=6.0)
        w.add_scalar("new", 0.1, 3, walltime=7.0, new_style=True)
        w.add_scalar("new64", 0.1, 4, walltime=8.0, new_style=True, double_precision=True)
    events = read_events(str(tmp_path))
    assert len(events) == len(values) + 4
    # simple_value is a float32.
    expected = [0.5, -0.0, 0.0, 3.0, 2.25, float(np.float32(1e-3)), 4.5, 7.25, 1.5]
    for i, (event, v) in enumerate(zip(events, expected)):
        assert event["step"] == i and event["wall_time"] == 1000.0 + i / 4
        assert event["summary"] == [{"tag": "train/loss", "simple_value": v}]
    assert events[len(values)]["step"] == 2 ** 40
    assert events[len(values) + 1] == {"wall_time": 6.0, "step": 0,
                                       "summary": [{"tag": "no step", "simple_value": 2.0}]}
    assert events[-2]["summary"] == [{"tag": "new", "plugin_name": "scalars",
                                      "tensor": {"dtype": 1, "float_val": [np.float32(0.1)]}}]
    assert events[-1]["summary"] == [{"tag": "new64", "plugin_name": "scalars",
                                      "tensor": {"dtype": 2, "double_val": [0.1]}}]
    with SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            w.add_scalar("x", np.ones(2))


def test_scalars_dict_writes_one_run_per_key(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(3):
            w.add_scalars("run/14h", {"xsinx": step * 0.5, "xcosx": ember.tensor(step * 2.0)},
                          step, walltime=50.0 + step)
        w.add_scalar("main", 1.0, 0, walltime=1.0)
    assert read_events(str(tmp_path))[0]["summary"][0]["tag"] == "main"
    for key, scale in (("xsinx", 0.5), ("xcosx", 2.0)):
        events = read_events(os.path.join(str(tmp_path), "run_14h_" + key))
        assert [e["step"] for e in events] == [0, 1, 2]
        assert [e["wall_time"] for e in events] == [50.0, 51.0, 52.0]
        assert [e["summary"] for e in events] == [
            [{"tag": "run/14h", "simple_value": s * scale}] for s in range(3)]


def tensorflow_bins():
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0] + pos


def expected_histogram(values, bins, max_bins=None):
    """The HistogramProto torch writes: NumPy's counts, bins merged down to max_bins, then cut
    to the nonzero bins with one empty bucket in front (TensorBoard shows right limits)."""
    values = np.asarray(values, dtype=float).reshape(-1)
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        k = len(counts) // max_bins
        groups = [counts[i:i + k].sum() for i in range(0, len(counts), k)]
        edges = np.append(edges[:-1:k], edges[-1])
        counts = np.array(groups)
    nonzero = np.flatnonzero(counts)
    first, last = nonzero[0], nonzero[-1]
    return {"min": values.min(), "max": values.max(), "num": float(values.size),
            "sum": values.sum(), "sum_squares": values.dot(values),
            "bucket_limit": edges[first:last + 2].tolist(),
            "bucket": [0.0] + counts[first:last + 1].astype(float).tolist()}


def test_histograms(tmp_path):
    rng = np.random.default_rng(1)
    normal = rng.standard_normal(1000)
    cases = [
        (normal, "tensorflow", None),
        (ember.from_numpy(normal.astype(np.float32).reshape(10, 100)), "tensorflow", None),
        ([1.0, 2.0, 2.0, 5.0, -3.0], "tensorflow", None),
        (normal * 5, "auto", None),
        (normal, "fd", 6),
        (rng.integers(0, 10, 50), 10, None),
        (normal + 100, "tensorflow", 40),
        (np.array([0.0]), "tensorflow", None),
        (np.array([2.0, 2.0]), "sturges", None),
    ]
    with SummaryWriter(str(tmp_path)) as w:
        for i, (values, bins, max_bins) in enumerate(cases):
            w.add_histogram("weights", values, i, bins=bins, walltime=10.0 * i, max_bins=max_bins)
        w.add_histogram_raw("raw", 0.0, 3.0, 4, 6.0, 14.0, [1.0, 2.0, 3.0], [1, 2, 1], 9,
                            walltime=1.5)
        with pytest.raises(ValueError, match="The input has no element"):
            w.add_histogram("empty", np.array([]))
        with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
            w.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0], [])
    events = read_events(str(tmp_path))
    assert len(events) == len(cases) + 1
    for i, (event, (values, bins, max_bins)) in enumerate(zip(events, cases)):
        if isinstance(values, ember.Tensor):
            values = values.numpy()
        edges = tensorflow_bins() if bins == "tensorflow" else bins
        assert event["step"] == i and event["wall_time"] == 10.0 * i
        (value,) = event["summary"]
        assert value["tag"] == "weights" and set(value) == {"tag", "histo"}
        got, want = value["histo"], expected_histogram(values, edges, max_bins)
        assert got.keys() == want.keys()
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"case {i}: {key}")
        assert len(got["bucket"]) == len(got["bucket_limit"]) >= 2
    assert events[-1]["summary"] == [{"tag": "raw", "histo": {
        "min": 0.0, "max": 3.0, "num": 4.0, "sum": 6.0, "sum_squares": 14.0,
        "bucket_limit": [1.0, 2.0, 3.0], "bucket": [1.0, 2.0, 1.0]}}]


def test_text(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_text("notes", "lr **0.1**, ünïcode ✓", 3, walltime=12.5)
        w.add_text("notes", "", 4, walltime=13.0)
    events = read_events(str(tmp_path))
    assert events[0] == {"wall_time": 12.5, "step": 3, "summary": [{
        "tag": "notes/text_summary", "plugin_name": "text",
        "tensor": {"dtype": 7, "shape": [1],
                   "string_val": ["lr **0.1**, ünïcode ✓".encode("utf-8")]}}]}
    assert events[1]["summary"][0]["tensor"]["string_val"] == [b""]


def test_default_log_dir_and_file_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1", filename_suffix=".v2")
    host = socket.gethostname()
    assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(host) + "_lr0.1",
                        w.get_logdir())
    (name,) = os.listdir(w.get_logdir())
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.%s\.%d\.\d+\.v2"
                        % (re.escape(host), os.getpid()), name)
    # The file is complete after flush(), before close().
    w.add_scalar("a", 1.0, 1)
    w.flush()
    assert read_events(w.get_logdir())[0]["summary"] == [{"tag": "a", "simple_value": 1.0}]
    w.close()
    w.close()  # a second close does nothing
    # Writing after close starts a new file, numbered after the last.
    w.add_scalar("a", 2.0, 2)
    w.close()
    files = event_files(w.get_logdir())
    assert len(files) == 2
    numbers = sorted(int(f.split(".")[-2]) for f in files)
    assert numbers[1] > numbers[0]


def test_purge_step(tmp_path):
    with SummaryWriter(str(tmp_path), purge_step=42) as w:
        w.add_scalar("x", 1.0, 42, walltime=3.0)
    events = read_events(str(tmp_path))
    assert events[0]["step"] == 42 and events[0]["file_version"] == "brain.Event:2"
    assert events[1]["step"] == 42 and events[1]["session_log"] == 1  # SessionLog.START
    assert events[2]["summary"] == [{"tag": "x", "simple_value": 1.0}]


def test_flush_every_max_queue_events(tmp_path):
    w = SummaryWriter(str(tmp_path), max_queue=3, flush_secs=10000)
    for i in range(3):
        w.add_scalar("x", float(i), i)
    assert len(read_events(str(tmp_path))) == 3
    w.close()


def test_methods_not_there_yet(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for name in ("add_image", "add_figure", "add_graph", "add_hparams", "add_embedding"):
            with pytest.raises(NotImplementedError,
                               match=f"ember's SummaryWriter does not have {name} yet"):
                getattr(w, name)(None)
