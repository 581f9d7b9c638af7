"""Bad calls from Python are Python exceptions of the kind PyTorch raises, with ember's message
(what was expected, what came); none crashes the interpreter. `make check-asan` runs this file under
AddressSanitizer too."""
import pytest

import ember
from ember import nn
import ember.nn.functional as F


@pytest.mark.parametrize("call, kind, match", [
    (lambda: ember.ones(2, 3) + ember.ones(4), RuntimeError, "broadcast"),
    (lambda: ember.ones(2, 3) @ ember.ones(2, 3), RuntimeError, "cannot be multiplied \\(2x3 and 2x3\\)"),
    (lambda: ember.ones(2)[5], IndexError, "out of bounds"),
    (lambda: ember.ones(2, 2)[0, 0, 0], IndexError, "too many indices"),
    (lambda: ember.ones(2).sum(dim=3), IndexError, "dimension out of range"),
    (lambda: ember.ones(2).transpose(0, 5), IndexError, "dimension out of range"),
    (lambda: ember.ones(3).index_select(0, ember.tensor([7])), IndexError, "out of bounds"),
    (lambda: ember.ones(3)[ember.tensor([1.5])], IndexError, "long, int, byte or bool"),
    (lambda: ember.ones(3)[::-1], ValueError, "step must be greater than zero"),
    (lambda: ember.ones(3)["a"], TypeError, "valid indices"),
    (lambda: ember.zeros("a"), TypeError, "zeros\\(\\) argument 'size' must be tuple of ints, not str"),
    (lambda: ember.zeros(2, dtype="float32"), TypeError, "dtype"),
    (lambda: ember.ones(2).view(3), RuntimeError, "view"),
    (lambda: ember.ones(2, device="cpu:9"), RuntimeError, "cpu:9"),
    (lambda: ember.ones(2, device="tpu"), RuntimeError, "tpu"),
    (lambda: ember.ones(2).to("cuda:x"), RuntimeError, "cuda:x"),
    (lambda: ember.ones(2, device="cpu:0") + ember.ones(2, device="cpu:1"), RuntimeError, "cpu:1"),
    (lambda: ember.tensor([[1, 2], [3]]), ValueError, "length"),
    (lambda: ember.tensor(["a"]), TypeError, "number"),
    (lambda: ember.ones(2).add(ember.ones(2), "x"), TypeError, "add"),
    (lambda: ember.ones(2).item(), RuntimeError, "item"),
    (lambda: ember.ones(2).mul(None), TypeError, "mul"),
    (lambda: nn.Linear(3, 2)(ember.ones(4, 5)), RuntimeError, "linear|matmul|mm"),
    (lambda: nn.Linear("a", 2), TypeError, "incompatible constructor arguments"),
    (lambda: nn.Conv2d(1, 2, 3)(ember.ones(1, 2, 5, 5)), RuntimeError, "conv2d"),
    (lambda: F.cross_entropy(ember.ones(2, 3), ember.tensor([0, 5])), IndexError, "out of bounds"),
    (lambda: F.cross_entropy(ember.ones(2, 3), ember.ones(2, 3), reduction="avg"), ValueError, "reduction"),
    (lambda: ember.cat([ember.ones(2), 3]), TypeError, "sequence of tensors"),
    (lambda: ember.cat([]), RuntimeError, "cat"),
    (lambda: ember.arange(1, 2, 3, 4), TypeError, "arange"),
    (lambda: ember.from_numpy([1, 2]), TypeError, "incompatible function arguments"),
    (lambda: ember.cuda.get_device_name(5), RuntimeError, ""),
    (lambda: ember.load("/nonexistent/file.safetensors"), FileNotFoundError, "nonexistent"),
    (lambda: ember.nn.Module().forward(ember.ones(1)), RuntimeError, "no forward"),
    (lambda: ember.utils.data.DataLoader(ember.utils.data.TensorDataset(ember.ones(2), ember.ones(3))), ValueError, "Size mismatch between tensors"),
])
def test_bad_calls_raise(call, kind, match):
    with pytest.raises(kind, match=match):
        call()


def test_wrong_argument_types_name_the_function_and_signatures():
    with pytest.raises(TypeError) as info:
        ember.ones(2).index_select("a", ember.tensor([0]))
    # PyTorch's wording: the function, the argument, what it must be and what it got.
    assert str(info.value) == "index_select() argument 'dim' must be int, not str"
    with pytest.raises(TypeError) as info:
        ember.ones(2).max("a")
    assert "max() received an invalid combination of arguments - got (Tensor, str)" in str(info.value)
    assert "(Tensor input, int dim, bool keepdim=False)" in str(info.value)


def test_errors_leave_state_unchanged():
    model = nn.Linear(2, 2)
    before = [p.clone() for p in model.parameters()]
    with pytest.raises(RuntimeError):
        model.load_state_dict({"weight": ember.zeros(3, 3), "bias": ember.zeros(2)})
    assert all(ember.equal(a, b) for a, b in zip(before, model.parameters()))
    x = ember.ones(3)
    with pytest.raises(IndexError):
        x[ember.tensor([0, 9])] = 5
    assert x.tolist() == [1.0, 1.0, 1.0]
