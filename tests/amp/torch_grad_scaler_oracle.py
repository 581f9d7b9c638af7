#!/usr/bin/python3 -O
"""PyTorch 1.13's own GradScaler (torch.cuda.amp.GradScaler) on the CPU, on the schedule of
injected infs and NaNs that grad_scaler_test.cpp replays in ember; prints one JSON line per step.

1.13's GradScaler is CUDA-only in three places, bridged here without touching its logic: it
disables itself when CUDA is unavailable (torch.cuda.is_available is patched to say yes), it
asserts its tensors are CUDA tensors (run with -O, which drops asserts), and its two kernels,
_amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, have no CPU implementation in
1.13: the functions below do what the CUDA kernels do (aten/src/ATen/native/cuda/AmpKernels.cu).
Everything else (unscale_/step/update, the skip decision, the per-optimizer state machine) is
PyTorch's code. Usage: torch_grad_scaler_oracle.py SCENARIO (see scenarios below)."""
import json, math, sys
import torch


def non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    for g in grads:
        if not bool(torch.isfinite(g).all()):
            found_inf.fill_(1.0)
        if inv_scale.item() != 1.0:
            g.mul_(inv_scale)  # float32 * float32, as the kernel's opmath


def update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, interval):
    if found_inf.item():
        scale.mul_(backoff_factor)
        growth_tracker.fill_(0)
    else:
        successful = int(growth_tracker.item()) + 1
        if successful == interval:
            grown = torch.tensor(scale.item(), dtype=torch.float32) * growth_factor
            if math.isfinite(grown.item()):
                scale.copy_(grown)
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)
    return scale


torch.cuda.is_available = lambda: True
torch._amp_foreach_non_finite_check_and_unscale_ = non_finite_check_and_unscale_
torch._amp_update_scale_ = update_scale_

# name: (init_scale, growth_interval, loss factor, {step: injected value}, steps that unscale_
# first). In growth_overflow the scale reaches 2^127, where growing once more would give inf: the
# kernel keeps the old scale; the tiny loss keeps the scaled gradients finite.
SCENARIOS = {
    "backoff_and_growth": (2.0**10, 3, 1.0, {1: math.inf, 2: math.nan, 6: -math.inf, 7: math.inf},
                           {4, 9}),
    "growth_overflow": (2.0**126, 2, 2.0**-10, {5: math.nan}, set()),
}


def main(name):
    init_scale, interval, factor, inject, unscale_first = SCENARIOS[name]
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [-3.0, 0.5]])
    opt = torch.optim.SGD([w], lr=0.125)
    scaler = torch.cuda.amp.GradScaler(init_scale=init_scale, growth_interval=interval)
    for step in range(12):
        opt.zero_grad()
        scaler.scale(((w * x).sum() * (step + 1)) ** 2 * (factor / 64)).backward()
        if step in inject:
            w.grad[1, 0] = inject[step]
        if step in unscale_first:
            scaler.unscale_(opt)
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        print(json.dumps({"step": step, "stepped": not torch.equal(before, w.detach()),
                          "scale": scaler.get_scale(),
                          "tracker": int(scaler._get_growth_tracker()),
                          "w": w.detach().flatten().tolist()}))


if __name__ == "__main__":
    main(sys.argv[1])
