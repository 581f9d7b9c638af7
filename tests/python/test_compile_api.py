"""torch.compile's surface on ember (PyTorch 2.6's signature, checks, messages and results):
OptimizedModule with `_orig_mod`, the decorator form, disable=, Module.compile. Compiled code
gives eager ember's values exactly (test_compile.py tests the capture itself). Expectations are what
PyTorch 2.6 prints in a Debian 13 root (docs/api-public.md says how to make one)."""
import pytest

import ember
from ember import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()

    def configure(self):
        return "configured"


def test_a_compiled_module_is_an_optimized_module_around_the_original():
    ember.manual_seed(0)
    net = Net()
    c = ember.compile(net)
    assert type(c).__name__ == "OptimizedModule" and c._orig_mod is net
    # nanoGPT strips this prefix when it loads a checkpoint written from a compiled model.
    assert list(c.state_dict()) == ["_orig_mod.fc.weight", "_orig_mod.fc.bias"]
    x = ember.randn(5, 4)
    assert ember.equal(c(x), net(x))
    assert c.configure() == "configured" and c.fc is net.fc
    c.eval()
    assert not net.training and not c.training
    c.note = 3  # attributes go to the original
    assert net.note == 3
    assert "(_orig_mod): Net(" in repr(c)


def test_compiled_functions_and_the_decorator_forms():
    def f(x, k=2):
        return x * k + 1

    cf = ember.compile(f)
    assert cf.__name__ == "f" and ember.equal(cf(ember.ones(3), k=3), f(ember.ones(3), k=3))

    @ember.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def g(x):
        return x - 1
    assert g(ember.ones(2)).tolist() == [0.0, 0.0]
    net = Net()
    assert ember.compile(net, disable=True) is net
    assert net.compile() is None and type(net) is Net


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(backend="foo"), RuntimeError,
     "Invalid backend: 'foo', see `torch._dynamo.list_backends()` for available backends."),
    (dict(mode="fast"), RuntimeError,
     "Unrecognized mode=fast, should be one of: default, reduce-overhead, max-autotune, "
     "max-autotune-no-cudagraphs"),
    (dict(mode="default", options={"a": 1}), RuntimeError,
     "Either mode or options can be specified, but both can't be specified at the same time."),
])
def test_bad_arguments_fail_as_in_pytorch(kwargs, error, message):
    with pytest.raises(error) as info:
        ember.compile(lambda x: x, **kwargs)
    assert str(info.value) == message


def test_compiler_namespace():
    assert ember.compiler.is_compiling() is False
    assert ember.compiler.list_backends() == ["cudagraphs", "inductor", "onnxrt", "openxla", "tvm"]
    assert ember.compiler.disable(len)([1, 2]) == 2
