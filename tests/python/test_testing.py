"""ember.testing against torch.testing (PyTorch 1.13): the same inputs pass or fail alike, with
the same messages, under PyTorch's default tolerances per dtype."""
import math

import pytest
import torch

import ember


def outcome(lib, actual, expected, **kw):
    try:
        lib.testing.assert_close(actual, expected, **kw)
        return None
    except (AssertionError, ValueError) as e:
        # The libraries' own names in the message are the only difference allowed.
        return type(e).__name__, str(e).replace("torch.", "LIB.").replace("ember.", "LIB.")


def both(make):
    return make(torch), make(ember)


CASES = {
    "equal": lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.0, 3.0]), {}),
    "within float32 tolerance": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0 + 1e-6]),
                                             {}),
    "one element off": lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.5, 3.0]), {}),
    "2-D, several off": lambda lib: (lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                     lib.tensor([[1.5, 2.0], [3.0, 9.0]]), {}),
    "float64 tolerance": lambda lib: (lib.tensor([1.0], dtype=lib.float64),
                                      lib.tensor([1.0 + 1e-6], dtype=lib.float64), {}),
    "bfloat16 tolerance": lambda lib: (lib.tensor([1.0], dtype=lib.bfloat16),
                                       lib.tensor([1.0078125], dtype=lib.bfloat16), {}),
    "integers exact": lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3]), {}),
    "dtype differs": lambda lib: (lib.tensor([1.0]), lib.tensor([1.0], dtype=lib.float64), {}),
    "dtype not checked": lambda lib: (lib.tensor([1.0]), lib.tensor([1.0], dtype=lib.float64),
                                      {"check_dtype": False}),
    "shape differs": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0]), {}),
    "nan unequal": lambda lib: (lib.tensor([math.nan]), lib.tensor([math.nan]), {}),
    "nan equal_nan": lambda lib: (lib.tensor([math.nan]), lib.tensor([math.nan]),
                                  {"equal_nan": True}),
    "explicit tolerances": lambda lib: (lib.tensor([1.0]), lib.tensor([1.1]),
                                        {"rtol": 0.2, "atol": 0.0}),
    "only rtol": lambda lib: (lib.tensor([1.0]), lib.tensor([1.0]), {"rtol": 0.1}),
    "scalars": lambda lib: (1.0, 1.5, {}),
    "scalars close": lambda lib: (1.0, 1.0 + 1e-9, {}),
    "int and float": lambda lib: (1, 1.0, {}),
    "sequence": lambda lib: ([lib.tensor(1.0), lib.tensor([2.0])],
                             [lib.tensor(1.0), lib.tensor([2.5])], {}),
    "mapping": lambda lib: ({"a": lib.tensor([1.0])}, {"a": lib.tensor([1.25])}, {}),
    "mapping keys": lambda lib: ({"a": lib.tensor([1.0])}, {"b": lib.tensor([1.0])}, {}),
    "sequence length": lambda lib: ([1.0], [1.0, 2.0], {}),
    "0-dim": lambda lib: (lib.tensor(2.0), lib.tensor(3.0), {}),
    "custom message": lambda lib: (lib.tensor([1.0]), lib.tensor([2.0]), {"msg": "mine"}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_agrees_with_pytorch(name):
    (ta, te, kw), (ea, ee, ekw) = both(CASES[name])
    assert outcome(ember, ea, ee, **ekw) == outcome(torch, ta, te, **kw)


def test_make_tensor_follows_its_arguments():
    t = ember.testing.make_tensor(3, 4, dtype=ember.float32, device="cpu", low=-1, high=1,
                                  requires_grad=True)
    assert tuple(t.shape) == (3, 4) and t.dtype == ember.float32 and t.requires_grad
    assert bool((t >= -1).all()) and bool((t < 1).all())
    i = ember.testing.make_tensor((5,), dtype=ember.int64, device="cpu", low=0, high=3)
    assert i.dtype == ember.int64 and set(i.tolist()) <= {0, 1, 2}
    assert not ember.testing.make_tensor(4, 4, dtype=ember.float32, device="cpu",
                                         noncontiguous=True).is_contiguous()
