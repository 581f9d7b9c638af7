"""ember.save / ember.load: safetensors files that PyTorch's weights load from and back, and
checkpoint dicts."""
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
    back = ember.load(tmp_path / "t.pt")
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
