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
    ember.save(ckpt, tmp_path / "ckpt.safetensors")
    back = ember.load(tmp_path / "ckpt.safetensors")
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
    with pytest.raises(RuntimeError):
        ember.load(tmp_path / "missing.safetensors")
