"""PyTorch on one GPU, timed with CUDA events: the workloads of bench/gpu_bench.cpp, same names.

Prints one JSON object per line: {"name", "torch", "unit"[, "torch_rate", "rate_unit"]}.
  python3 bench/pytorch_gpu.py [FILTER]
  python3 bench/pytorch_gpu.py --dry-run [FILTER]   # each workload once, small, on the CPU
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_resnet import resnet18_fashion_mnist  # noqa: E402


DRY_RUN = False  # --dry-run: checks that every workload runs, on the CPU; its times mean nothing


def time_ms(f, iters, repeats=7):
    if DRY_RUN:
        start = time.perf_counter()
        f()
        return 1e3 * (time.perf_counter() - start)
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    t = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            f()
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e) / iters)
    return statistics.median(t)


def emit(name, value, unit, rate=0.0, rate_unit=""):
    d = {"name": name, "torch": value, "unit": unit}
    if rate:
        d.update({"torch_rate": rate, "rate_unit": rate_unit})
    print(json.dumps(d), flush=True)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x.flatten(1))))))


def train_step_ms(model, batch, size, dev, iters, precision):
    """ms per training step (forward, cross-entropy, backward, SGD with momentum) on random
    (batch, 1, size, size) images. precision "_amp_fp16": the forward and the loss under autocast
    float16 with a GradScaler; "_amp_bf16": bfloat16 without one; "": float32. The dry run uses the
    CPU's autocast, which in 1.13 takes bfloat16 only, and no scaler (1.13's is CUDA-only)."""
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 1, size, size, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    low = torch.bfloat16 if precision == "_amp_bf16" or DRY_RUN else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=precision == "_amp_fp16" and not DRY_RUN)

    def step():
        with torch.autocast(dev.type, dtype=low, enabled=bool(precision)):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return time_ms(step, iters)


def main():
    global DRY_RUN
    args = sys.argv[1:]
    DRY_RUN = "--dry-run" in args
    args = [a for a in args if a != "--dry-run"]
    flt = args[0] if args else ""
    want = lambda n: flt in n
    if not DRY_RUN and not torch.cuda.is_available():
        sys.exit("pytorch_gpu.py: no GPU: torch %s sees no CUDA device (--dry-run runs on the CPU)" % torch.__version__)
    dev = torch.device("cpu" if DRY_RUN else "cuda:0")
    small = DRY_RUN
    n = 1 << 10 if small else 256 << 20
    # cuDNN's TF32 off, as bench/gpu_bench.cpp sets it in ember: the convolutions and training steps
    # compare the same float32 arithmetic. matmul's TF32 is set per workload.
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        if want("copy_256M") or want("add_256M") or want("sum_256M"):
            a, b, c = torch.randn(n, device=dev), torch.randn(n, device=dev), torch.empty(n, device=dev)
            gb = 1e-9 * n * 4
            if want("copy_256M"):
                ms = time_ms(lambda: c.copy_(a), 10)
                emit("copy_256M", ms, "ms", 2 * gb / (ms * 1e-3), "GB/s")
            if want("add_256M"):
                ms = time_ms(lambda: torch.add(a, b, out=c), 10)
                emit("add_256M", ms, "ms", 3 * gb / (ms * 1e-3), "GB/s")
                ms = time_ms(lambda: a + b, 10)
                emit("add_out_of_place_256M", ms, "ms", 3 * gb / (ms * 1e-3), "GB/s")
            if want("sum_256M"):
                ms = time_ms(lambda: a.sum(), 10)
                emit("sum_256M", ms, "ms", gb / (ms * 1e-3), "GB/s")
            del a, b, c
        if want("softmax"):
            x = torch.randn(32 if small else 32768, 1024, device=dev)
            ms = time_ms(lambda: torch.softmax(x, -1), 20)
            emit("softmax_32768x1024", ms, "ms", 2e-9 * x.numel() * 4 / (ms * 1e-3), "GB/s")
        if want("argmax_256M"):  # one long row
            a = torch.randn(n, device=dev)
            ms = time_ms(lambda: a.argmax(), 10)
            emit("argmax_256M", ms, "ms", 1e-9 * n * 4 / (ms * 1e-3), "GB/s")
            del a
        # Sequence models, as bench/gpu_bench.cpp: causal attention (PyTorch's fused kernels; 1.13,
        # the dry run's PyTorch, has none: the math path stands in) and layer norm.
        for L in (1024, 4096):
            name = "sdpa_causal_f32_L%d" % L
            if not want(name):
                continue
            n = 64 if small else L
            q, k, v = (torch.randn(8, 8, n, 64, device=dev) for _ in range(3))
            sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
            if sdpa is None:
                mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
                def sdpa(q, k, v, is_causal):
                    s = (q @ k.transpose(-2, -1)) / 8.0
                    return torch.softmax(s.masked_fill(~mask, float("-inf")), -1) @ v
            ms = time_ms(lambda: sdpa(q, k, v, is_causal=True), 10)
            emit(name, ms, "ms", 2e-12 * 8 * 8 * 2 * n * n * 64 / 2 / (ms * 1e-3), "TFLOP/s")
        if want("layer_norm_8192x4096"):
            x = torch.randn(64 if small else 8192, 4096, device=dev)
            w, b = torch.ones(4096, device=dev), torch.zeros(4096, device=dev)
            ms = time_ms(lambda: torch.nn.functional.layer_norm(x, (4096,), w, b, 1e-5), 20)
            emit("layer_norm_8192x4096", ms, "ms", 2e-9 * x.numel() * 4 / (ms * 1e-3), "GB/s")
        for size in (4096, 8192):
            for kind in ("f32", "tf32", "bf16", "f16"):
                name = "matmul_%s_%d" % (kind, size)
                if not want(name):
                    continue
                torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
                dt = {"bf16": torch.bfloat16, "f16": torch.float16}.get(kind, torch.float32)
                if DRY_RUN and dt == torch.float16:
                    dt = torch.float32  # PyTorch 1.13 has no float16 mm on the CPU
                m = 64 if small else size
                a, b = torch.randn(m, m, device=dev).to(dt), torch.randn(m, m, device=dev).to(dt)
                ms = time_ms(lambda: torch.mm(a, b), 5 if size == 8192 else 20)
                emit(name, ms, "ms", 2e-12 * m ** 3 / (ms * 1e-3), "TFLOP/s")
        torch.backends.cuda.matmul.allow_tf32 = False
        if want("overhead_add_1"):
            x, y = torch.randn(1, device=dev), torch.randn(1, device=dev)
            emit("overhead_add_1", 1e3 * time_ms(lambda: x + y, 10000), "us")
        if want("alloc_free"):
            emit("alloc_free_1M", 1e3 * time_ms(lambda: torch.empty(1 << 18, device=dev), 10000), "us")
    # Backward rows time torch.autograd.grad of a retained graph: the op's backward alone, no .grad
    # accumulation (autograd::grad in bench/gpu_bench.cpp).
    def backward_row(name, inputs, y):
        g = torch.randn_like(y)
        emit(name, time_ms(lambda: torch.autograd.grad(y, inputs, g, retain_graph=True), 20), "ms")

    def forward_backward(name, inputs, forward):
        if want(name + "_fwd"):
            with torch.no_grad():
                emit(name + "_fwd", time_ms(forward, 20), "ms")
        if want(name + "_bwd"):
            backward_row(name + "_bwd", inputs, forward())

    either = lambda name: want(name + "_fwd") or want(name + "_bwd")
    rand = lambda *shape: torch.randn(*shape, device=dev, requires_grad=True)
    if want("softmax_backward_32768x1024"):
        x = rand(32 if small else 32768, 1024)
        backward_row("softmax_backward_32768x1024", (x,), torch.softmax(x, -1))
    batch = 2 if small else 32
    if either("conv2d_lenet2"):  # LeNet's second convolution at batch 256, with its bias
        x, w, b = rand(2 if small else 256, 6, 12, 12), rand(16, 6, 5, 5), rand(16)
        forward_backward("conv2d_lenet2", (x, w, b), lambda: F.conv2d(x, w, b))
    if either("conv2d_resnet3x3"):  # a 3x3 convolution of ResNet-18's first stage, no bias
        x, w = rand(batch, 64, 56, 56), rand(64, 64, 3, 3)
        forward_backward("conv2d_resnet3x3", (x, w), lambda: F.conv2d(x, w, None, 1, 1))
    if either("max_pool2d_3x3s2"):  # ResNet's stem pooling
        x = rand(batch, 64, 112, 112)
        forward_backward("max_pool2d_3x3s2", (x,), lambda: F.max_pool2d(x, 3, 2, 1))
    if either("batch_norm_train"):  # training-mode batch norm of ResNet's first stage
        x, w, b = rand(batch, 64, 56, 56), torch.ones(64, device=dev, requires_grad=True), \
            torch.zeros(64, device=dev, requires_grad=True)
        mean, var = torch.zeros(64, device=dev), torch.ones(64, device=dev)
        forward_backward("batch_norm_train", (x, w, b),
                         lambda: F.batch_norm(x, mean, var, w, b, training=True))
    # Forward and backward of sequence layers, as bench/gpu_bench.cpp: causal attention at
    # L = 4096, a 2-layer LSTM of 512 over 35 steps of 64 sequences (cuDNN, TF32 off).
    if want("sdpa_causal_f32_L4096_train"):
        n = 64 if small else 4096
        q, k, v = (torch.randn(8, 8, n, 64, device=dev, requires_grad=True) for _ in range(3))
        sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
        if sdpa is None:  # PyTorch 1.13 (the dry run): the math path
            mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
            def sdpa(q, k, v, is_causal):
                s = (q @ k.transpose(-2, -1)) / 8.0
                return torch.softmax(s.masked_fill(~mask, float("-inf")), -1) @ v
        emit("sdpa_causal_f32_L4096_train",
             time_ms(lambda: sdpa(q, k, v, is_causal=True).sum().backward(), 5), "ms")
    if want("lstm_2x512_train"):
        width = 16 if small else 512
        lstm = torch.nn.LSTM(width, width, num_layers=2).to(dev)
        x = torch.randn(35, 2 if small else 64, width, device=dev, requires_grad=True)
        emit("lstm_2x512_train", time_ms(lambda: lstm(x)[0].sum().backward(), 10), "ms")
    # Training steps in float32 and with mixed precision (train_step_ms); ResNet-18 on one channel:
    # d2l's small stem at 28x28 (batch 32, and d2l's multi-GPU batch 256), torchvision's at 96x96.
    for precision in ("", "_amp_fp16", "_amp_bf16"):
        name = "lenet_train_step_256" + precision
        if want(name):
            emit(name, train_step_ms(LeNet(), 2 if small else 256, 28, dev, 20, precision), "ms")
        for batch, size in ((32, 28), (256, 28), (32, 96)):
            name = "resnet18_train_step_%d_%d%s" % (batch, size, precision)
            if want(name):
                model = resnet18_fashion_mnist(size)
                emit(name, train_step_ms(model, 2 if small else batch, size, dev, 10, precision),
                     "ms")


if __name__ == "__main__":
    main()
