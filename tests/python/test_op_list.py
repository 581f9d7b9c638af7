"""The op list (ember/ops/ops.def) as Python sees it: every row bound where its tags say, with the
keywords of its schema; nothing bound that has no row (nn.functional's names are not Tensor
methods); and docs/ops.md is what scripts/op-docs writes from it."""
import importlib.machinery
import importlib.util
import inspect
import os
import pathlib

import pytest

import ember

ROOT = pathlib.Path(os.environ.get("EMBER_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
MODULES = {"torch": ember._C._ops, "linalg": ember._C._linalg, "fft": ember._C._fft,
           "special": ember._C._special, "nn_functional": ember._C._F}
ROWS = ember._C._op_list()


def _strip(schema):
    head = schema[:schema.index("(")]
    for prefix in ("Tensor.", "torch."):
        if head.startswith(prefix):
            return prefix, head[len(prefix):]
    return "", head


def test_every_row_is_bound_where_its_tags_say():
    for row in ROWS:
        module = MODULES[row["namespace"]]
        kinds = {_strip(s)[0] for s in row["schemas"]}
        if "function" in row["tags"] or "torch." in kinds:
            assert hasattr(module, row["name"]), row
        if row["namespace"] == "torch" and ("method" in row["tags"] or "Tensor." in kinds):
            assert hasattr(ember.Tensor, row["name"]), row
        if not row["tags"] or "internal" in row["tags"]:
            assert "function" not in row["tags"] and "method" not in row["tags"]


def test_functional_names_are_not_tensor_methods():
    # F.conv2d and F.dropout2d were once Tensor methods too: their table made everything one.
    for name in ("conv2d", "dropout2d", "cross_entropy", "interpolate"):
        assert not hasattr(ember.Tensor, name), name
    assert hasattr(ember.Tensor, "softmax") and hasattr(ember.Tensor, "relu")


def test_signatures_come_from_the_row():
    row = next(r for r in ROWS if r["namespace"] == "torch" and r["name"] == "topk")
    assert row["schemas"] == ["topk(Tensor input, int k, int dim=-1, bool largest=True, "
                              "bool sorted=True) -> (Tensor values, Tensor indices)"]
    assert str(inspect.signature(ember.topk)) == "(input, k, dim=-1, largest=True, sorted=True)"
    assert "mm" in {r["name"] for r in ROWS if r["policy"] == "kLowerPrecisionFp"}


def test_docs_are_what_the_op_list_says():
    path = ROOT / "scripts" / "op-docs"
    loader = importlib.machinery.SourceFileLoader("op_docs", str(path))
    spec = importlib.util.spec_from_loader("op_docs", loader)
    op_docs = importlib.util.module_from_spec(spec)
    loader.exec_module(op_docs)
    expected = op_docs.render(ROWS)
    actual = (ROOT / "docs" / "ops.md").read_text()
    assert actual == expected, ("docs/ops.md is out of date: run "
                                "PYTHONPATH=build/release/python scripts/op-docs docs/ops.md")


def test_a_capture_records_the_ops_python_calls_with_their_tensors():
    x = ember.rand(3, 4)
    with ember._C._OpCapture() as c:
        y = x.exp()
        z = y + 1
        z.relu_()  # the C++ in-place kernel, entered as relu_ (no copy back)
    x.exp()  # after the capture: not recorded
    top = [o for o in c.ops() if o["depth"] == 0]
    assert [o["op"] for o in top] == ["exp", "add", "relu_"]
    assert top[0]["outputs"][0].data_ptr() == y.data_ptr() == top[1]["inputs"][0].data_ptr()
    assert top[2]["outputs"][0].data_ptr() == z.data_ptr()
    assert "inplace" in top[2]["tags"] and "pointwise" in top[0]["tags"]


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                  "bitwise_right_shift"])
def test_binary_in_place_methods_run_their_kernel_into_self(name):
    import torch
    a = torch.tensor([7, -7, 5, 12, -3], dtype=torch.int32)
    b = torch.tensor([2, 3, -2, 5, 1], dtype=torch.int32)
    x, y = ember.tensor(a.tolist(), dtype=ember.int32), ember.tensor(b.tolist(), dtype=ember.int32)
    ptr, version = x.data_ptr(), x._version
    with ember._C._OpCapture() as c:
        out = getattr(x, name + "_")(y)
        getattr(x, name + "_")(2)
    getattr(a, name + "_")(b)
    getattr(a, name + "_")(2)
    assert out is x and x.data_ptr() == ptr and x._version == version + 2
    assert x.tolist() == a.tolist()
    ops = [(o["op"], o["depth"]) for o in c.ops()]
    assert ops.count((name + "_", 0)) == 2 and not any(op == "copy_" for op, _ in ops), ops


def test_binary_in_place_methods_keep_pytorch_rules():
    x = ember.tensor([5, 7])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x.remainder_(0)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        x.fmod_(ember.tensor([1.5, 2.0]))
    with pytest.raises(RuntimeError, match='"bitwise_and_cpu" not implemented for'):
        ember.tensor([1.0]).bitwise_and_(ember.tensor([1.0]))
    assert x.tolist() == [5, 7]  # a refused call leaves self as it was
    f = ember.tensor([5.5, -7.25])
    f.remainder_(ember.tensor([2.0, 2.0]))
    assert f.tolist() == [1.5, 0.75]
    g = ember.tensor([3.0, 4.0], requires_grad=True)
    h = g * 1
    h.fmod_(ember.tensor([2.0, 3.0]))  # through autograd: d/dx fmod(x, c) = 1
    h.sum().backward()
    assert g.grad.tolist() == [1.0, 1.0]
