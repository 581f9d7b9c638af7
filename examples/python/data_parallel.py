"""Data parallelism in one process, first by hand with the primitives (replicate, scatter,
parallel_apply, gather), then with nn.DataParallel, on every GPU (or on two virtual CPU devices
without GPUs). The model is a Python subclass: each replica runs its Python forward."""
import os

os.environ.setdefault("EMBER_CPU_DEVICES", "2")

import ember  # noqa: E402
from ember import nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


devices = ember.cuda.try_all_gpus()
if devices == [ember.device("cpu")]:
    devices = [ember.device("cpu:0"), ember.device("cpu:1")]
print("devices:", devices)
model = Net().to(devices[0])
x = ember.randn(9, 20).to(devices[0])

inputs = nn.parallel.scatter(x, devices)
replicas = nn.parallel.replicate(model, devices[:len(inputs)])
outputs = nn.parallel.parallel_apply(replicas, inputs)
y = nn.parallel.gather(outputs, devices[0])
print("chunks:", [t.shape[0] for t in inputs], "-> output", y.shape, "on", y.device)

dp = nn.DataParallel(model, device_ids=devices)
opt = ember.optim.SGD(model.parameters(), lr=0.1)
target = ember.randint(0, 5, (9,)).to(devices[0])
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(dp(x), target)
    loss.backward()  # the replicas' gradients are summed into model's parameters
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
