"""`ember train --model resnet18` in PyTorch, for comparing accuracy and epoch time in the same run.

ResNet-18 as torchvision defines it (BasicBlock; module names conv1, bn1, layer1.0.conv1, ...,
layer2.0.downsample.0, fc), with d2l's stem for small images (3x3 convolution, stride 1, no
max-pool) at 28x28 and torchvision's (7x7 stride 2, max-pool) for --resize 96, one input channel,
10 classes; torchvision's initialisation. Fashion-MNIST normalised with (x/255 - 0.2860) / 0.3530,
bilinearly resized when --resize is given, batch 64, shuffled, SGD lr 0.01 momentum 0.9. Run with
/usr/bin/python3 (Debian's python3-torch; torchvision is not needed). Prints one JSON line like
`ember train`.

  /usr/bin/python3 bench/pytorch_resnet.py [--threads N] [--epochs N] [--resize 96] [--limit N]
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from pytorch_lenet import load, save_safetensors  # noqa: E402


class BasicBlock(nn.Module):
    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class ResNet18(nn.Module):
    def __init__(self, in_channels=3, num_classes=1000, small_stem=False):
        super().__init__()
        self.small_stem = small_stem
        if small_stem:
            self.conv1 = nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.Identity() if small_stem else nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18_fashion_mnist(image_size=28):
    """ember's models::resnet18_fashion_mnist: the small stem up to 32x32 images."""
    return ResNet18(1, 10, small_stem=image_size <= 32)


def resize(x, size):
    return F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False) if size else x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--resize", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default="")
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    torch.backends.cudnn.allow_tf32 = False
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    if a.limit:
        xtr, ytr = xtr[:a.limit], ytr[:a.limit]
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    model = resnet18_fashion_mnist(a.resize or 28).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    bs = a.batch_size
    seconds = 0.0
    for _ in range(a.epochs):
        model.train()
        perm = torch.randperm(len(xtr), device=dev)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(0, len(xtr), bs):
            idx = perm[i:i + bs]
            loss = F.cross_entropy(model(resize(xtr[idx], a.resize)), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        seconds += time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        acc = sum((model(resize(xte[i:i + 500], a.resize)).argmax(1) == yte[i:i + 500]).sum().item()
                  for i in range(0, len(xte), 500)) / len(xte)
    if a.save:
        save_safetensors(a.save, model.state_dict())
    print(json.dumps({"device": a.device, "epochs": a.epochs, "threads": a.threads, "train_seconds": seconds,
                      "samples_per_second": len(xtr) * a.epochs / seconds, "test_accuracy": acc}))


if __name__ == "__main__":
    main()
