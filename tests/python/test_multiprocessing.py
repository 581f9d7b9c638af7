"""ember.multiprocessing: Hogwild on a shared model with Process (fork), tensors through a Queue
by descriptor (a write on one side is read on the other), spawn() with its error reports, and the
spawn start method passing shared tensors without a copy. Every wait has a deadline."""
import os
import signal

import pytest

import ember
import ember.multiprocessing as mp
from ember import nn
import ember.nn.functional as F


def hogwild_worker(model, rank, steps):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = ember.randn(16, 4)
        loss = F.mse_loss(model(x), x.sum(1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_hogwild_with_fork_processes_updates_the_shared_model():
    model = nn.Linear(4, 1)
    nn.init.zeros_(model.weight)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=hogwild_worker, args=(model, r, 200)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    # The workers learned y = sum(x) in the parent's memory: every weight moved towards 1.
    assert all(w > 0.5 for w in model.weight.flatten().tolist())


def queue_child(q_in, q_out, received):
    t = q_in.get(timeout=30)
    t.add_(1)  # in the parent's memory
    q_out.put(ember.full((3,), 7.0))
    q_out.put(nn.Parameter(ember.ones(2)))
    q_out.put("done")
    # As with PyTorch's queues, a producer lives until its tensors are received: the consumer
    # takes each one's descriptor from it.
    received.wait(30)


def test_queue_passes_tensors_by_descriptor():
    ctx = mp.get_context("fork")
    q_in, q_out, received = ctx.Queue(), ctx.Queue(), ctx.Event()
    t = ember.zeros(4)
    p = ctx.Process(target=queue_child, args=(q_in, q_out, received))
    p.start()
    q_in.put(t)
    got = q_out.get(timeout=30)
    assert t.is_shared()  # put moved it into shared memory, in place
    param = q_out.get(timeout=30)
    assert q_out.get(timeout=30) == "done"
    received.set()
    p.join(30)
    assert p.exitcode == 0
    assert t.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert got.tolist() == [7.0, 7.0, 7.0] and isinstance(param, nn.Parameter) and param.requires_grad


def fill_rank(rank, shared):
    shared[rank] = rank + 1


def fill_through_view(rank, whole, tail):
    tail[rank] = 10.0 * (rank + 1)  # a view of whole's memory
    assert whole[1 + rank].item() == 10.0 * (rank + 1)


def raise_in_one(rank):
    if rank == 1:
        raise ValueError("worker 1 failed on purpose")


def kill_one(rank):
    if rank == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    import time
    time.sleep(60)  # ended by spawn once rank 0 is found dead


def test_spawn_passes_shared_tensors_without_copy():
    shared = ember.zeros(3)
    mp.spawn(fill_rank, args=(shared,), nprocs=3)  # the spawn start method: a fresh interpreter
    assert shared.tolist() == [1.0, 2.0, 3.0]
    whole = ember.zeros(3)
    mp.spawn(fill_through_view, args=(whole, whole[1:]), nprocs=2)  # two views, one segment
    assert whole.tolist() == [0.0, 10.0, 20.0]
    shared2 = ember.zeros(2).share_memory_()  # fork inherits memory: it must be shared first
    mp.spawn(fill_rank, args=(shared2,), nprocs=2, start_method="fork")
    assert shared2.tolist() == [1.0, 2.0]


def test_spawn_reports_the_failing_process():
    with pytest.raises(mp.ProcessRaisedException, match="worker 1 failed on purpose") as info:
        mp.spawn(raise_in_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1 and "Traceback" in str(info.value)
    with pytest.raises(mp.ProcessExitedException, match="SIGKILL") as killed:
        mp.spawn(kill_one, nprocs=2, start_method="fork")
    assert killed.value.error_index == 0 and killed.value.signal_name == "SIGKILL"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 1)
        self.register_buffer("steps", ember.zeros(1))
        self.register_buffer("scratch", ember.zeros(2), persistent=False)
        self.name = "net"

    def forward(self, x):
        self.steps += 1
        return self.head(self.body(x))


def hogwild_spawned(rank, model):
    assert type(model) is Net and model.name == "net" and model.training
    assert model._non_persistent_buffers_set == {"scratch"} and "scratch" not in model.state_dict()
    assert model.head._non_persistent_buffers_set == {"mask"}, "a C++ layer's kinds travel too"
    hogwild_worker(model, rank, 100)


def test_modules_travel_to_spawned_processes_by_handle():
    model = Net()
    model.head.register_buffer("mask", ember.ones(1), persistent=False)
    nn.init.zeros_(model.head.weight)
    before = model.head.weight.clone()
    mp.spawn(hogwild_spawned, args=(model,), nprocs=2)  # the spawn start method: pickled
    assert not ember.equal(model.head.weight, before)  # trained in the parent's memory
    # 2 x 100 forwards added to the shared buffer (Hogwild: a racing update may be lost).
    assert 50 < model.steps.item() <= 200
    assert model.head.weight.is_shared() and isinstance(model.head.weight, nn.Parameter)


def check_converted_resnet(rank, model, conv1_weight):
    bns = [m for _, m in model.named_modules() if "BatchNorm" in type(m).__name__]
    assert len(bns) == 20 and all(type(m) is nn.SyncBatchNorm for m in bns), set(map(type, bns))
    assert type(model.fc) is nn.Linear and type(model.layer1[0].extra) is nn.ReLU
    assert ember.equal(model.conv1.weight, conv1_weight)
    assert ember.equal(model.layer2[0].bn1.running_var, ember.full((128,), 2.0))


def test_a_converted_resnet_travels_with_its_replaced_layers():
    model = nn.SyncBatchNorm.convert_sync_batchnorm(ember.models.resnet18_fashion_mnist())
    model.layer1[0].extra = nn.ReLU()  # a child its constructor does not make
    model.layer2[0].bn1.running_var.fill_(2.0)
    mp.spawn(check_converted_resnet, args=(model, model.conv1.weight.detach().clone()), nprocs=1)


def test_a_subclass_of_a_layer_is_refused_clearly():
    class MyLinear(nn.Linear):
        pass

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with pytest.raises(TypeError, match="subclass of one of ember's layers"):
        from multiprocessing.reduction import ForkingPickler
        ForkingPickler.dumps(MyLinear(2, 2))
    q.close()
