"""The guides' training loop: a Net(nn.Module) with its own forward, trained on Fashion-MNIST on
the best device, then tested."""
import argparse
import time

import ember
from ember import nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, FashionMNIST


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batches", type=int, default=0, help="stop each epoch after this many (0: all)")
    parser.add_argument("--save", default="")
    args = parser.parse_args()
    device = ember.cuda.try_gpu()
    ember.manual_seed(0)
    train_loader = DataLoader(FashionMNIST(train=True), batch_size=64, shuffle=True)
    test_loader = DataLoader(FashionMNIST(train=False), batch_size=1000)
    net = Net().to(device)
    opt = ember.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(args.epochs):
        net.train()
        start, seen = time.perf_counter(), 0
        for i, (x, y) in enumerate(train_loader):
            if args.batches and i >= args.batches:
                break
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            seen += x.shape[0]
        elapsed = time.perf_counter() - start
        net.eval()
        correct = total = 0
        with ember.no_grad():
            for x, y in test_loader:
                correct += (net(x.to(device)).argmax(1).cpu() == y).sum().item()
                total += y.shape[0]
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}, {seen / elapsed:.0f} samples/s on {device},"
              f" test accuracy {100 * correct / total:.2f}%")
    if args.save:
        ember.save(net.state_dict(), args.save)


if __name__ == "__main__":
    main()
