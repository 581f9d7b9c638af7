"""Choosing GPUs: cuda:i by index, `with ember.cuda.device(i)`, and CUDA_VISIBLE_DEVICES, which
renumbers the visible GPUs from 0 and must be set before CUDA starts (before the first CUDA call).
Run as CUDA_VISIBLE_DEVICES=1 python3 choose_gpu.py to see only the second GPU."""
import os

import ember

print("CUDA_VISIBLE_DEVICES =", os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)"))
n = ember.cuda.device_count()
print("visible GPUs:", n)
if n:
    last = n - 1
    with ember.cuda.device(last):
        x = ember.ones(4, device="cuda")  # "cuda" means the current device
        print("made on", x.device, "current device", ember.cuda.current_device())
    print("current device after the block:", ember.cuda.current_device())
    print("the best of them:", max(range(n), key=lambda i: ember.cuda.mem_get_info(i)[0]))
else:
    print("no GPU: everything runs on", ember.cuda.try_gpu())
