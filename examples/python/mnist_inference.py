"""Inference with a temperature: softmax(logits / T) sharpens (T < 1) or softens (T > 1) the
predicted distribution. Trains a few hundred batches first so that it stands alone."""
import ember
import ember.nn.functional as F
from ember.utils.data import DataLoader, FashionMNIST

device = ember.cuda.try_gpu()
ember.manual_seed(1)
model = ember.models.LeNet().to(device)
opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for i, (x, y) in enumerate(DataLoader(FashionMNIST(train=True), batch_size=64, shuffle=True)):
    if i == 200:
        break
    opt.zero_grad()
    F.cross_entropy(model(x.to(device)), y.to(device)).backward()
    opt.step()

model.eval()
x, y = next(iter(DataLoader(FashionMNIST(train=False), batch_size=1000)))
with ember.no_grad():
    logits = model(x.to(device))
for temperature in [0.3, 0.6, 1.0, 2.0]:
    probs = F.softmax(logits / temperature, dim=1)
    confidence, label = probs.max(1)
    accuracy = (label.cpu() == y).float().mean().item()
    print(f"temperature {temperature:.1f}: accuracy {100 * accuracy:.1f}%,"
          f" mean confidence {confidence.mean().item():.3f}")
