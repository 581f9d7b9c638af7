"""ember.nn from Python: Module subclasses (attributes as parameters, buffers and children),
ember's layers, state dicts, functional and init, against PyTorch 1.13."""
import collections

import numpy as np
import pytest
import torch

import ember
from ember import nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 10)
        self.register_buffer("seen", ember.zeros(1))
        self.label = "lenet"

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        self.seen += x.shape[0]
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5)
        self.fc1 = torch.nn.Linear(16 * 5 * 5, 120)
        self.fc2 = torch.nn.Linear(120, 10)
        self.register_buffer("seen", torch.zeros(1))

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        self.seen += x.shape[0]
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def load_from_torch(net, tnet):
    net.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})


def test_subclass_registers_like_pytorch():
    net, tnet = Net(), TorchNet()
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert list(net.state_dict()) == list(tnet.state_dict())
    assert [n for n, _ in net.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert [n for n, _ in net.named_children()] == [n for n, _ in tnet.named_children()]
    assert isinstance(net.fc1, nn.Linear) and isinstance(net.fc1.weight, nn.Parameter)
    assert net.fc1.weight.shape == (120, 400) and net.fc1.in_features == 400
    assert isinstance(next(net.parameters()), nn.Parameter)
    assert net.label == "lenet" and net.seen.tolist() == [0.0]
    assert repr(net).startswith("Net(\n  (conv1): Conv2d(1, 6, kernel_size=(5, 5)")
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        net.nothing


def test_forward_backward_match_pytorch():
    net, tnet = Net(), TorchNet()
    load_from_torch(net, tnet)
    x_np = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    y = [1, 3, 5, 7]
    out = net(ember.from_numpy(x_np.copy()))
    tout = tnet(torch.from_numpy(x_np))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    F.cross_entropy(out, ember.tensor(y)).backward()
    torch.nn.functional.cross_entropy(tout, torch.tensor(y)).backward()
    for (n, p), (tn, tp) in zip(net.named_parameters(), tnet.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
    assert net.seen.tolist() == [4.0]


def test_setattr_replace_and_delete():
    net = Net()
    net.fc2 = nn.Linear(120, 3)
    assert net.fc2.out_features == 3 and [n for n, _ in net.named_children()][-1] == "fc2"
    w = nn.Parameter(ember.ones(2))
    net.extra = w
    assert "extra" in dict(net.named_parameters())
    net.extra = nn.Parameter(ember.zeros(2))
    assert net.extra.tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="ember.nn.Parameter or None expected"):
        net.extra = ember.ones(2)
    net.fc1.bias = None
    assert "fc1.bias" not in net.state_dict()
    del net.conv2
    assert "conv2" not in dict(net.named_children())
    net.seen = ember.full((1,), 5.0)
    assert net.state_dict()["seen"].tolist() == [5.0]


def test_non_persistent_buffers_like_pytorch():
    def build(lib):
        m = lib.nn.Linear(3, 2)
        m.register_buffer("cache", lib.ones(4), persistent=False)
        m.register_buffer("count", lib.zeros(1))
        return m

    m, tm = build(ember), build(torch)
    assert list(m.state_dict()) == list(tm.state_dict()) == ["weight", "bias", "count"]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert m._non_persistent_buffers_set == tm._non_persistent_buffers_set == {"cache"}
    m.load_state_dict({k: E(v) for k, v in tm.state_dict().items()})  # strict
    m.register_buffer("cache", ember.zeros(4))  # registering again makes it persistent
    assert "cache" in m.state_dict() and m._non_persistent_buffers_set == set()


def E(x):
    return ember.from_numpy(x.detach().numpy().copy())


def test_module_init_must_come_first():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
            super().__init__()

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_train_eval_to_and_state_dict_round_trip():
    net = Net()
    assert net.training and net.fc1.training
    net.eval()
    assert not net.training and not net.fc1.training
    net.train()
    net.training = False
    assert not net.training and net.fc1.training
    other = Net()
    other.load_state_dict(net.state_dict())
    for (_, a), (_, b) in zip(net.state_dict().items(), other.state_dict().items()):
        assert ember.equal(a, b)
    with pytest.raises(RuntimeError, match="Missing key"):
        other.load_state_dict({"fc1.weight": ember.zeros(120, 400)})
    net.to(ember.float64)
    assert net.fc1.weight.dtype is ember.float64 and net.seen.dtype is ember.float64
    net.to("cpu:1")
    assert net.fc1.weight.device == ember.device("cpu:1")
    assert net.double() is net and net.cpu() is net


def test_layers_match_pytorch():
    x_np = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    x, tx = ember.from_numpy(x_np.copy()), torch.from_numpy(x_np)
    pairs = [(nn.MaxPool2d(2), torch.nn.MaxPool2d(2)), (nn.AvgPool2d(3, stride=2, padding=1), torch.nn.AvgPool2d(3, stride=2, padding=1)),
             (nn.ReLU(), torch.nn.ReLU()), (nn.Flatten(), torch.nn.Flatten()), (nn.Softmax(1), torch.nn.Softmax(1)),
             (nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)), (nn.Sigmoid(), torch.nn.Sigmoid()), (nn.Tanh(), torch.nn.Tanh())]
    for m, tm in pairs:
        np.testing.assert_allclose(m(x).numpy(), tm(tx).numpy(), rtol=1e-5, atol=1e-6, err_msg=repr(m))
    bn, tbn = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    np.testing.assert_allclose(bn(x).detach().numpy(), tbn(tx).detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), rtol=1e-5)
    seq = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2), nn.ReLU(), nn.Flatten(), nn.Linear(36, 2))
    tseq = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(36, 2))
    seq.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tseq.state_dict().items()})
    np.testing.assert_allclose(seq(x).detach().numpy(), tseq(tx).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert len(seq) == 4 and isinstance(seq[-1], nn.Linear) and [type(m).__name__ for m in seq][:2] == ["Conv2d", "ReLU"]
    named = nn.Sequential(collections.OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"]


def test_functional_and_losses_match_pytorch():
    rng = np.random.default_rng(3)
    logits_np = rng.standard_normal((5, 4)).astype(np.float32)
    target = [0, 3, 1, 1, 2]
    e, t = ember.from_numpy(logits_np.copy()), torch.from_numpy(logits_np)
    for red in ["mean", "sum", "none"]:
        np.testing.assert_allclose(F.cross_entropy(e, ember.tensor(target), reduction=red).numpy(),
                                   torch.nn.functional.cross_entropy(t, torch.tensor(target), reduction=red).numpy(), rtol=1e-5)
    np.testing.assert_allclose(nn.CrossEntropyLoss(label_smoothing=0.1)(e, ember.tensor(target)).item(),
                               torch.nn.CrossEntropyLoss(label_smoothing=0.1)(t, torch.tensor(target)).item(), rtol=1e-5)
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(e, 1), ember.tensor(target)).item(),
                               torch.nn.functional.nll_loss(t.log_softmax(1), torch.tensor(target)).item(), rtol=1e-5)
    np.testing.assert_allclose(nn.MSELoss()(e, e * 0.5).item(), torch.nn.MSELoss()(t, t * 0.5).item(), rtol=1e-5)
    assert F.one_hot(ember.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert F.dropout(e, 0.5, training=False).tolist() == e.tolist()


def test_init_and_apply():
    lin = nn.Linear(4, 3)
    nn.init.zeros_(lin.bias)
    nn.init.constant_(lin.weight, 0.5)
    assert lin.weight.sum().item() == 6.0 and lin.bias.sum().item() == 0.0
    nn.init.kaiming_uniform_(lin.weight, a=0, mode="fan_in", nonlinearity="relu")
    assert lin.weight.abs().max().item() <= (6 / 4) ** 0.5

    visited = []
    Net().apply(lambda m: visited.append(type(m).__name__))
    assert visited[-1] == "Net" and visited.count("Conv2d") == 2


def test_models():
    model = ember.models.LeNet()
    assert model(ember.zeros(2, 1, 28, 28)).shape == (2, 10)
    assert ember.models.MLP([784, 32, 10])(ember.zeros(3, 784)).shape == (3, 10)


def test_winograd_switch_and_both_algorithms_match_pytorch():
    # ember's 3x3 convolutions of 64+ channels may use Winograd's algorithm (on by default);
    # with it and without, forward and gradients stay within float32 tolerance of PyTorch's.
    assert ember.backends.mkldnn.is_available() in (True, False)
    assert ember.backends.mkldnn.allow_winograd is True
    x = np.random.RandomState(0).randn(4, 64, 8, 8).astype(np.float32)
    w = (np.random.RandomState(1).randn(64, 64, 3, 3) / 24).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, padding=1)
    ty.square().sum().backward()
    try:
        for on in (True, False):
            ember.backends.mkldnn.allow_winograd = on
            assert ember.backends.mkldnn.allow_winograd is on
            ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
            ey = F.conv2d(ex, ew, padding=1)
            ey.square().sum().backward()
            for got, want in ((ey, ty), (ex.grad, tx.grad), (ew.grad, tw.grad)):
                scale = want.abs().max().item()
                np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                           rtol=1e-4, atol=1e-4 * scale)
    finally:
        ember.backends.mkldnn.allow_winograd = True


def test_cudnn_convolution_switches():
    # torch.backends.cudnn.benchmark and .deterministic with PyTorch's defaults, kept by ember's
    # core; under every combination (and with cuDNN off) a convolution's output and gradients give
    # PyTorch's numbers, on the GPU where there is one.
    cudnn = ember.backends.cudnn
    assert cudnn.benchmark is torch.backends.cudnn.benchmark is False
    assert cudnn.deterministic is torch.backends.cudnn.deterministic is False
    torch.manual_seed(6)
    tc = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)
    x = torch.randn(3, 4, 9, 9, requires_grad=True)
    tc(x).square().sum().backward()
    devices = ["cpu"] + (["cuda"] if ember.cuda.is_available() else [])
    try:
        for enabled, benchmark, deterministic in ((True, False, False), (True, True, False),
                                                  (True, False, True), (False, False, False)):
            cudnn.enabled, cudnn.benchmark, cudnn.deterministic = enabled, benchmark, deterministic
            cudnn.allow_tf32 = False
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == \
                (enabled, benchmark, deterministic)
            for device in devices:
                ec = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)
                ec.load_state_dict({k: ember.tensor(v.detach().numpy())
                                    for k, v in tc.state_dict().items()})
                ec.to(device)
                ex = ember.tensor(x.detach().numpy()).to(device).requires_grad_()
                ey = ec(ex)
                ey.square().sum().backward()
                cases = ((ey, tc(x)), (ex.grad, x.grad), (ec.weight.grad, tc.weight.grad),
                         (ec.bias.grad, tc.bias.grad))
                for got, want in cases:
                    got = np.asarray(got.detach().cpu().numpy())
                    assert np.abs(got - want.detach().numpy()).max() < 1e-4, (device, enabled)
    finally:
        cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = \
            True, False, False, True


@pytest.mark.parametrize("stride,dilation,output_padding,groups", [
    (1, 2, 1, 1), (2, 3, 2, 2), ((1, 2), (2, 1), (1, 1), 1), (2, 1, 1, 2)])
def test_conv_transpose2d_output_padding_past_the_stride(stride, dilation, output_padding, groups):
    # PyTorch allows an output padding up to the dilation: the output is then larger than the
    # forward convolution of its size would give, which oneDNN (and cuDNN) do not take; ember's
    # own kernels run it. Outputs and the gradients of input, weight and bias against PyTorch 1.13.
    torch.manual_seed(9)
    x = torch.randn(2, 4, 7, 6, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    b = torch.randn(3 * groups, requires_grad=True)
    args = (stride, 0, output_padding, groups, dilation)
    ty = torch.nn.functional.conv_transpose2d(x, w, b, *args)
    g = torch.randn(ty.shape)
    (ty * g).sum().backward()
    ex, ew, eb = (E(t.detach()).requires_grad_() for t in (x, w, b))
    ey = F.conv_transpose2d(ex, ew, eb, *args)
    assert tuple(ey.shape) == tuple(ty.shape)
    (ey * E(g)).sum().backward()
    for got, want in ((ey, ty), (ex.grad, x.grad), (ew.grad, w.grad), (eb.grad, b.grad)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                                   atol=1e-4)


def test_to_empty_gives_new_uninitialised_tensors_of_the_same_shapes_as_pytorch():
    import torch
    results = []
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        m[0].bias.requires_grad_(False)
        before = m[0].weight.data_ptr()
        assert m.to_empty(device="cpu") is m
        assert m[0].weight.data_ptr() != before
        results.append([(n, tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad)
                        for n, t in list(m.named_parameters()) + list(m.named_buffers())])
        m[0].reset_parameters()
        assert tuple(m(lib.ones(4, 2)).shape) == (4, 3)
    assert results[0] == results[1]


def test_sequential_slices_keep_names_and_modules():
    # PyTorch: a Sequential of the chosen children, under their own names (model[::2]).
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 4), nn.Tanh())
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 4),
                            torch.nn.Tanh())
    for index in (slice(None, None, 2), slice(1, 3), slice(-1, None), slice(3, 0, -1)):
        assert [n for n, _ in m[index].named_children()] == \
            [n for n, _ in t[index].named_children()]
        assert type(m[index]) is nn.Sequential
    assert m[::2][1] is m[2]
