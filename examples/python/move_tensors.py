"""Putting tensors and a model on a device: .to(device), .cuda(), .cpu(); an op needs its
operands on one device (ember never moves them for you)."""
import ember
from ember import nn

device = ember.cuda.try_gpu()
x = ember.ones(2, 3, device=device)          # made there
y = ember.randn(2, 3).to(device)             # moved there
print((x + y).device, ember.ones(2).to(device, ember.float64).dtype)
if device.type == "cuda":
    print("back on the host:", (x + y).cpu().device)

net = nn.Sequential(nn.Linear(3, 1))
net.to(device)
print("parameters on", next(net.parameters()).device, "output", net(x).shape)

try:
    ember.ones(2, device="cpu") + ember.ones(2, device=ember.cuda.try_gpu() if device.type == "cuda" else "cpu:1")
except RuntimeError as e:
    print("mixed devices:", str(e).splitlines()[0][:100])
