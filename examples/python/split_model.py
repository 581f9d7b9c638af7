"""A model split between two devices: the first layers on the CPU, the rest on the GPU (the
second virtual CPU device without one), the activation moved between them in forward; backward
flows through the copy."""
import os

os.environ.setdefault("EMBER_CPU_DEVICES", "2")

import ember  # noqa: E402
from ember import nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402


class SplitModel(nn.Module):
    def __init__(self, second):
        super().__init__()
        self.second_device = second
        self.first = nn.Linear(8, 16)
        self.second = nn.Linear(16, 4).to(second)

    def forward(self, x):
        h = F.relu(self.first(x))                     # on the CPU
        return self.second(h.to(self.second_device))  # on the second device


second = ember.device("cuda:0") if ember.cuda.is_available() else ember.device("cpu:1")
model = SplitModel(second)
opt = ember.optim.SGD(model.parameters(), lr=0.1)
x, y = ember.randn(32, 8), ember.randint(0, 4, (32,)).to(second)
for step in range(5):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
print("first layer on", model.first.weight.device, "- second on", model.second.weight.device)
