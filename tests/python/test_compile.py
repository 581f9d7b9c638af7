"""ember.compile's capture and fusion (ember/compile/, Note [Graphs from traces]): a compiled
function or module traced on its first call with each signature and replayed after, bit for bit
eager ember's values on new inputs, elementwise chains fused, signatures (shapes, non-tensor
arguments, train/eval) traced anew, and the graph breaks (a value read on the host, backward, a
custom autograd.Function, compiler.disable) reported and run eagerly."""
import os
import subprocess
import sys

import pytest

import ember
from ember import nn
import ember.nn.functional as F


def chain(x, y, scale=0.5):
    t = (x * 2 + 1).exp()
    t = (t - y) / (x.abs() + 1)
    t = t.tanh() * y.sigmoid() + x.abs().sqrt()
    return {"out": t * scale, "pair": (t, None)}


def test_a_chain_is_fused_and_replayed_with_eager_bits():
    c = ember.compile(chain)
    for seed in range(3):
        ember.manual_seed(seed)
        x, y = ember.randn(10000), ember.randn(10000)
        got, want = c(x, y), chain(x, y)
        assert ember.equal(got["out"], want["out"]) and ember.equal(got["pair"][0], want["pair"][0])
        assert got["pair"][1] is None
    s = c._stats()
    assert (s["traces"], s["graph_runs"], s["breaks"]) == (1, 2, [])
    entry = next(iter(c._entries.values()))
    assert entry.compiled.fused_ops([x, y]) >= 10
    assert "fused[" in entry.compiled.graph([x, y])


def test_named_tuple_results_keep_their_type():
    c = ember.compile(lambda x: (x * 2).max(0))
    x = ember.randn(3, 4)
    c(x)
    got, want = c(x + 1), (x * 2 + 2).max(0)
    assert type(got) is type(want) and ember.equal(got.values, want.values)
    assert ember.equal(got.indices, want.indices)


def test_non_tensor_arguments_and_shapes_make_new_signatures():
    c = ember.compile(chain)
    x, y = ember.randn(8), ember.randn(8)
    c(x, y)
    assert ember.equal(c(x, y, scale=2.0)["out"], chain(x, y, scale=2.0)["out"])
    assert ember.equal(c(x[:4], y[:4])["out"], chain(x[:4], y[:4])["out"])
    assert c._stats()["traces"] == 3


def test_is_compiling_inside_the_trace_only():
    seen = []

    def f(x):
        seen.append(ember.compiler.is_compiling())
        return x + 1
    c = ember.compile(f)
    c(ember.ones(2))
    c(ember.ones(2))
    assert seen == [True]  # the replay does not run Python
    assert not ember.compiler.is_compiling()


@pytest.mark.parametrize("read", ["item", "print", "if"])
def test_host_reads_are_graph_breaks_that_run_eagerly(read, capsys):
    def f(x):
        y = x * 2
        if read == "item":
            return y + y.sum().item()
        if read == "print":
            print(y)
            return y + 1
        return y + 1 if (y.sum() > 0) else y - 1
    c = ember.compile(f)
    for v in (1.0, -1.0, 2.0):
        x = ember.full((3,), v)
        assert ember.equal(c(x), f(x))
    s = c._stats()
    assert s["traces"] == 1 and s["eager_runs"] == 2 and len(s["breaks"]) == 1
    assert "host" in s["breaks"][0]


def test_backward_and_custom_functions_and_disable_are_breaks():
    w = ember.randn(3, requires_grad=True)

    def step(x):
        loss = (w * x).sum()
        loss.backward()
        return loss.detach()
    c = ember.compile(step)
    c(ember.ones(3))
    c(ember.ones(3))
    assert ember.equal(w.grad, ember.ones(3) * 2)
    assert "backward" in c._stats()["breaks"][0]

    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    c = ember.compile(lambda x: Double.apply(x) + 1)
    c(ember.ones(2))
    assert "autograd.Function" in c._stats()["breaks"][0]

    @ember.compiler.disable
    def helper(x):
        return x - 1
    c = ember.compile(lambda x: helper(x) * 3)
    assert ember.equal(c(ember.ones(2)), ember.full((2,), 0.0))
    assert "disable" in c._stats()["breaks"][0]


def test_fullgraph_refuses_a_break():
    c = ember.compile(lambda x: x + x.sum().item(), fullgraph=True)
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        c(ember.ones(2))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc2(self.drop(F.gelu(self.fc1(x))))


def test_a_compiled_module_trains_as_the_eager_one_and_follows_eval():
    ember.manual_seed(0)
    net = MLP()
    ref = MLP()
    ref.load_state_dict(net.state_dict())
    c = ember.compile(net)
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1)
    net.eval(), ref.eval()
    for step in range(4):
        ember.manual_seed(100 + step)
        x, t = ember.randn(8, 16), ember.randn(8, 4)
        for model, o in ((c, opt), (ref, opt_ref)):
            o.zero_grad()
            loss = F.mse_loss(model(x), t)
            loss.backward()
            o.step()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert ember.equal(p, q)
    assert c.__dict__["_compiled"]._stats()["graph_runs"] == 3
    c.train()
    x = ember.randn(8, 16)
    a, b = c(x), c(x)  # traced, then replayed: dropout draws anew
    assert not ember.equal(a, b)
    assert c.__dict__["_compiled"]._stats()["traces"] == 2


def test_graph_breaks_are_logged_when_asked():
    code = ("import ember\n"
            "c = ember.compile(lambda x: x + x.sum().item())\n"
            "c(ember.ones(2)); c(ember.ones(3))\n")
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "graph break: Tensor.item() reads values on the host" in r.stderr
    assert "recompiling" in r.stderr


# Programs beyond elementwise chains: a replay on new values must give eager ember's result, so
# that any path making a tensor outside the op list (which a replay would freeze) shows.
_CASES = {
    "matmul": lambda x, w: (x @ w).relu(),
    "linear": lambda x, w: F.linear(x, w.t(), None),
    "softmax": lambda x, w: F.softmax(x, dim=-1) * 2,
    "log_softmax": lambda x, w: F.log_softmax(x @ w, dim=1),
    "layer_norm": lambda x, w: F.layer_norm(x, (8,)),
    "index": lambda x, w: x[0] + x[:, 1:3].sum() + x[..., -1:],
    "index_tensor": lambda x, w: x[ember.tensor([2, 0])] * 2,
    "index_list": lambda x, w: x[:, [1, 3]],
    "views": lambda x, w: x.view(2, 8, 2).permute(2, 0, 1).reshape(4, 8).contiguous() + 1,
    "transpose": lambda x, w: x.T.clone() * x.t().contiguous(),
    "cat_stack": lambda x, w: ember.cat([x, x * 2], 0) + ember.stack([x, x]).sum(0).repeat(2, 1),
    "where_mask": lambda x, w: ember.where(x > 0, x, w[0, 0]).masked_fill(x < -1, 0.5),
    "reductions": lambda x, w: x.mean(1) + x.amax(0)[:4] + x.std() + x.norm(),
    "dtype": lambda x, w: (x * 100).to(ember.int32).float() / 7 + x.double().sum().float(),
    "detach": lambda x, w: x.detach() * 2 + x.abs().detach(),
    "cross_entropy": lambda x, w: F.cross_entropy(x @ w, ember.tensor([1, 0, 3, 2])),
    "gelu_mlp": lambda x, w: F.gelu(x @ w) @ w.t(),
    "sdpa": lambda x, w: F.scaled_dot_product_attention(
        x.view(1, 1, 4, 8), x.view(1, 1, 4, 8), x.view(1, 1, 4, 8), is_causal=True),
    "inplace": lambda x, w: x.clone().add_(1).mul_(w[0, 0]).clamp_(-1, 1),
    "split_chunk": lambda x, w: sum(t.sum() for t in x.chunk(2, 1)) + x.split(3, 1)[1].mean(),
    "arange_zeros": lambda x, w: x + ember.arange(8) + ember.zeros_like(x) + ember.ones(4, 8),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_a_replay_gives_eager_values_on_new_inputs(name):
    fn = _CASES[name]
    c = ember.compile(fn)
    ember.manual_seed(0)
    c(ember.randn(4, 8), ember.randn(8, 4))
    for seed in (1, 2):
        ember.manual_seed(seed)
        x, w = ember.randn(4, 8), ember.randn(8, 4)
        got, want = c(x, w), fn(x, w)
        assert ember.equal(got, want), name
    s = c._stats()
    assert s["breaks"] == [] and s["graph_runs"] == 2, s


def test_batch_norm_in_training_updates_its_buffers_on_replay():
    ember.manual_seed(0)
    bn, ref = nn.BatchNorm1d(8), nn.BatchNorm1d(8)
    c = ember.compile(bn)
    for seed in range(3):
        ember.manual_seed(seed)
        x = ember.randn(16, 8)
        assert ember.equal(c(x), ref(x))
    assert ember.equal(bn.running_mean, ref.running_mean)
    assert int(bn.num_batches_tracked) == 3
