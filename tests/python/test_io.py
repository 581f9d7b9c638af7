"""ember.save / ember.load: safetensors files that PyTorch's weights load from and back, and
checkpoint dicts."""
import os
import pickle

import numpy as np
import pytest
import torch

import ember
from ember import nn


def test_state_dict_round_trip_with_pytorch(tmp_path):
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tmodel.state_dict().items()})
    path = tmp_path / "model.safetensors"
    ember.save(model.state_dict(), path)
    loaded = ember.load(path)
    assert sorted(loaded) == sorted(tmodel.state_dict())  # in the file's (safetensors) order
    tmodel2 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    tmodel2.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in loaded.items()})
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(model(ember.from_numpy(x)).detach().numpy(),
                               tmodel2(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    ember.save(model, tmp_path / "m2.safetensors")
    assert list(ember.load(tmp_path / "m2.safetensors")) == list(loaded)


def test_checkpoint_dict(tmp_path):
    model = nn.Linear(2, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(ember.ones(1, 2)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "note": "ok"}
    ember.save(ckpt, tmp_path / "ckpt.pt")
    back = ember.load(tmp_path / "ckpt.pt")
    assert back["epoch"] == 3 and back["note"] == "ok"
    assert sorted(back["model"]) == ["bias", "weight"]
    model2 = nn.Linear(2, 2)
    model2.load_state_dict(back["model"])
    assert ember.equal(model2.weight, model.weight)
    opt2 = ember.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(back["optimizer"])
    t = ember.arange(6).reshape(2, 3)
    ember.save(t, tmp_path / "t.safetensors")
    assert ember.equal(ember.load(tmp_path / "t.safetensors"), t)


def test_bad_files_and_values(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    with pytest.raises(RuntimeError, match="bad.safetensors"):
        ember.load(bad)
    with pytest.raises(TypeError, match="neither a tensor"):
        ember.save({"x": object()}, tmp_path / "x.safetensors")
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "missing.pt")


def test_torch_save_format_both_ways(tmp_path):
    """ember.save writes torch.save's zip format: torch.load reads it, and ember.load reads what
    torch.save wrote (tensors of every dtype, Parameters, nested containers, NumPy arrays)."""
    data = {"w": ember.arange(6.0).reshape(2, 3).t(), "i": ember.arange(4),
            "b": ember.tensor([True, False]), "h": ember.ones(3, dtype=ember.bfloat16) / 3,
            "f16": ember.ones(2, dtype=ember.float16), "p": nn.Parameter(ember.ones(2)),
            "nested": [1, "two", (3.0, {"n": np.arange(3)})], "scalar": ember.tensor(2.5)}
    ember.save(data, tmp_path / "e.pt")
    t = torch.load(tmp_path / "e.pt")
    assert torch.equal(t["w"], torch.arange(6.0).reshape(2, 3).t())
    assert t["i"].dtype == torch.int64 and t["b"].dtype == torch.bool
    assert t["h"].dtype == torch.bfloat16 and torch.equal(t["h"], torch.ones(3, dtype=torch.bfloat16) / 3)
    assert isinstance(t["p"], torch.nn.Parameter) and t["p"].requires_grad
    assert t["nested"][:2] == [1, "two"] and (t["nested"][2][1]["n"] == np.arange(3)).all()
    assert t["scalar"].shape == () and t["scalar"].item() == 2.5
    torch.save(t, tmp_path / "t.pt")
    # A NumPy array inside: as PyTorch 2.6, the restricted default refuses NumPy's globals, and
    # weights_only=False reads the (trusted) file.
    with pytest.raises(pickle.UnpicklingError, match="numpy.core.multiarray._reconstruct"):
        ember.load(tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt", weights_only=False)
    for k in ("w", "i", "b", "h", "f16", "scalar"):
        assert back[k].dtype == data[k].dtype and ember.equal(back[k], data[k]), k
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad


def test_optimizer_state_moves_between_torch_and_ember(tmp_path):
    tw = torch.nn.Parameter(torch.randn(3, 2))
    topt = torch.optim.Adam([tw], lr=0.1)
    for _ in range(2):
        topt.zero_grad()
        (tw ** 2).sum().backward()
        topt.step()
    torch.save({"w": tw.detach(), "opt": topt.state_dict()}, tmp_path / "t.pt")
    ck = ember.load(tmp_path / "t.pt")
    w = nn.Parameter(ck["w"].clone())
    opt = ember.optim.Adam([w], lr=0.1)
    opt.load_state_dict(ck["opt"])
    for _ in range(2):
        topt.zero_grad()
        (tw ** 2).sum().backward()
        topt.step()
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-6)
    ember.save(opt.state_dict(), tmp_path / "e.pt")
    state = torch.load(tmp_path / "e.pt")
    assert state["param_groups"][0]["lr"] == 0.1 and float(state["state"][0]["step"]) == 4.0


def test_whole_module_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    ember.save(model, tmp_path / "m.pt")
    back = ember.load(tmp_path / "m.pt")
    x = ember.randn(5, 4)
    assert ember.equal(back(x), model(x))


# --- weights_only: PyTorch's restricted unpickler ---------------------------------------------

def _torch_save_zip(path, pickled, records=None):
    """A file laid out as torch.save's, holding the given pickle (and storage records)."""
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickled)
        for key, data in (records or {}).items():
            z.writestr(f"archive/data/{key}", data)
        z.writestr("archive/version", "3\n")


class _RunsShell:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        import os
        return (os.system, (self.command,))


def test_weights_only_refuses_code_the_file_names(tmp_path, monkeypatch):
    """A crafted torch.save file whose pickle names os.system: under weights_only (the default,
    as PyTorch 2.6) nothing runs and the error is PyTorch's; weights_only=False runs it (the
    caller said the file is trusted)."""
    import pickle
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    _torch_save_zip(path, pickle.dumps({"w": _RunsShell(f"touch {marker}")}, protocol=2))
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    for kwargs in ({}, {"weights_only": True}):
        with pytest.raises(pickle.UnpicklingError) as err:
            ember.load(path, **kwargs)
        assert not marker.exists()
        assert "Weights only load failed" in str(err.value)
        assert "GLOBAL posix.system" in str(err.value) or "system" in str(err.value)
        assert "whose module posix is blocked" in str(err.value)
    # The blocked modules stay blocked even when the user marks the global safe.
    import os
    with ember.serialization.safe_globals([os.system]):
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            ember.load(path)
    assert not marker.exists()
    ember.load(path, weights_only=False)
    assert marker.exists()


class _Config:
    def __init__(self, lr=0.1):
        self.lr = lr


def test_weights_only_allow_list_and_safe_globals(tmp_path, monkeypatch):
    """What the allow-list admits (tensors, parameters, containers, dtypes, devices, sizes) loads;
    a user class loads once marked safe, with PyTorch's message before."""
    import collections
    import pickle
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    model = nn.Linear(3, 2)
    ckpt = {"model": model.state_dict(), "step": 7, "shape": ember.Size([2, 3]),
            "dtype": ember.float16, "device": ember.device("cpu"), "ids": {1, 2},
            "counts": collections.Counter("aab"), "t": ember.arange(4), "p": model.weight,
            "pair": (1.5, None, True, "x", b"raw")}
    path = tmp_path / "ok.pt"
    torch.save({k: v for k, v in ckpt.items() if k not in ("t", "p", "model", "dtype", "device",
                                                           "shape")} |
               {"t": torch.arange(4), "p": torch.nn.Parameter(torch.ones(2, 3)),
                "model": torch.nn.Linear(3, 2).state_dict(), "dtype": torch.float16,
                "device": torch.device("cpu"), "shape": torch.Size([2, 3])}, path)
    back = ember.load(path, weights_only=True)
    assert back["step"] == 7 and back["ids"] == {1, 2} and back["counts"]["a"] == 2
    assert back["dtype"] == ember.float16 and back["shape"] == (2, 3)
    assert isinstance(back["p"], nn.Parameter) and back["p"].shape == (2, 3)
    assert sorted(back["model"]) == ["bias", "weight"]
    assert back["pair"] == (1.5, None, True, "x", b"raw")

    path2 = tmp_path / "config.pt"
    _torch_save_zip(path2, pickle.dumps({"config": _Config(0.5)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError) as err:
        ember.load(path2)
    text = str(err.value)
    assert f"GLOBAL {__name__}._Config was not an allowed global by default" in text
    assert "add_safe_globals" in text and "In PyTorch 2.6" in text
    with ember.serialization.safe_globals([_Config]):
        assert ember.load(path2)["config"].lr == 0.5
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path2)  # the context manager's marks are gone
    ember.serialization.add_safe_globals([_Config])
    try:
        assert _Config in ember.serialization.get_safe_globals()
        assert ember.load(path2, weights_only=True)["config"].lr == 0.5
    finally:
        ember.serialization.clear_safe_globals()
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert ember.load(path2)["config"].lr == 0.5
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path2, weights_only=True)  # the switch changes only the default


def test_a_model_this_process_saved_loads_back_whole(tmp_path, monkeypatch):
    """1.x programs save the whole model and load it a few lines later (word_language_model):
    Note [Files this process wrote]. A file changed since, or written elsewhere, is refused."""
    import pickle
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    path = tmp_path / "whole.pt"
    ember.save(model, path)
    back = ember.load(path)
    assert isinstance(back, nn.Sequential) and ember.equal(back[0].weight, model[0].weight)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path, weights_only=True)  # asked for explicitly: the allow-list holds
    import zipfile
    with zipfile.ZipFile(path) as z:
        pickled = z.read([n for n in z.namelist() if n.endswith("data.pkl")][0])
    _torch_save_zip(tmp_path / "changed.pt", pickled.replace(b"ReLU", b"GELU"))
    with pytest.raises(pickle.UnpicklingError):
        ember.load(tmp_path / "changed.pt")


@pytest.mark.parametrize("case", ["not_a_zip", "no_pickle", "truncated", "bad_key", "bad_pid",
                                  "garbage"])
def test_weights_only_bad_files_are_clear_errors(tmp_path, case):
    """Broken files: an UnpicklingError or RuntimeError that says what is wrong, never another
    exception from deep inside."""
    import pickle
    path = tmp_path / "bad.pt"
    good = tmp_path / "good.pt"
    torch.save({"w": torch.ones(3)}, good)
    import zipfile
    with zipfile.ZipFile(good) as z:
        pickled = z.read([n for n in z.namelist() if n.endswith("data.pkl")][0])
    if case == "not_a_zip":
        path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    elif case == "no_pickle":
        _torch_save_zip(path, b"", {})
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("archive/version", "3\n")
    elif case == "truncated":
        _torch_save_zip(path, pickled[:len(pickled) // 2])
    elif case == "bad_key":
        _torch_save_zip(path, pickled)  # the storage record is missing
    elif case == "bad_pid":
        _torch_save_zip(path, pickled.replace(b"storage", b"stowage"))
    else:
        _torch_save_zip(path, bytes(range(256)) * 4)
    with pytest.raises((pickle.UnpicklingError, RuntimeError)) as err:
        ember.load(path, weights_only=True)
    assert str(err.value)


def test_fuzzing_the_reader_finds_nothing(tmp_path):
    """scripts/fuzz's torch_load target, briefly (it runs for minutes there): mutated torch.save
    files give only the reader's clear errors, never another exception or a call into os.system,
    eval or subprocess (tests/fuzz/fuzz_torch_load.py replaces them by traps)."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "fuzz", "fuzz_torch_load.py")
    r = subprocess.run([sys.executable, script, "8", str(tmp_path / "findings")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 findings" in r.stdout


@pytest.mark.parametrize("protocol", [0, 1, 2, pickle.HIGHEST_PROTOCOL])
def test_cpp_objects_pickle_under_every_protocol(protocol):
    # Protocols 0 and 1 used to terminate the process (pybind11 throwing inside copyreg).
    for obj in [ember.float64, ember.device("cpu"), ember.tensor([1.0, 2.0]), nn.Linear(2, 3),
                ember.Generator().manual_seed(3)]:
        back = pickle.loads(pickle.dumps(obj, protocol=protocol))
        assert type(back) is type(obj)
    assert pickle.loads(pickle.dumps(ember.int8, protocol=protocol)) == ember.int8
    assert callable(ember.float32.__reduce__()[0])
