"""Computes with PyTorch what tests/ops/differential_test.cpp asks, for comparison with ember.

Reads DIR/cases.jsonl (one case per line: op, input .npy files, arguments), writes DIR/out_<id>.npy
for each case (or DIR/err_<id>.txt with PyTorch's error). Run with /usr/bin/python3 (python3-torch).
"""
import json
import os
import sys

import numpy as np
import torch

torch.set_num_threads(1)


def load(d, name):
    return torch.from_numpy(np.load(os.path.join(d, name)))


def run(op, x, a):
    t = torch
    unary = {"neg": t.neg, "abs": t.abs, "exp": t.exp, "log": t.log, "sqrt": t.sqrt, "tanh": t.tanh,
             "sigmoid": t.sigmoid, "relu": t.relu, "sin": t.sin, "cos": t.cos, "floor": t.floor,
             "round": t.round, "rsqrt": t.rsqrt, "square": t.square, "log1p": t.log1p}
    binary = {"add": t.add, "sub": t.sub, "mul": t.mul, "div": t.div, "pow": t.pow,
              "maximum": t.maximum, "minimum": t.minimum, "eq": t.eq, "lt": t.lt, "ge": t.ge}
    if op in unary:
        return unary[op](x[0])
    if op in binary:
        return binary[op](x[0], x[1])
    if op == "add_scalar":
        return x[0] + a["scalar"]
    if op == "mul_scalar":
        return x[0] * a["scalar"]
    if op == "where":
        return t.where(x[0], x[1], x[2])
    if op == "clamp":
        return t.clamp(x[0], a["lo"], a["hi"])
    if op in ("sum", "mean", "amax", "amin"):
        return getattr(t, op)(x[0], dim=a["dims"], keepdim=a["keepdim"])
    if op == "var":
        return t.var(x[0], dim=a["dims"], unbiased=a["unbiased"], keepdim=a["keepdim"])
    if op == "std":
        return t.std(x[0], dim=a["dims"], unbiased=a["unbiased"], keepdim=a["keepdim"])
    if op == "argmax":
        return t.argmax(x[0], dim=a["dim"], keepdim=a["keepdim"])
    if op == "prod":
        return t.prod(x[0], dim=a["dim"], keepdim=a["keepdim"])
    if op == "logsumexp":
        return t.logsumexp(x[0], dim=a["dims"], keepdim=a["keepdim"])
    if op == "matmul":
        return t.matmul(x[0], x[1])
    if op == "softmax":
        return t.softmax(x[0], dim=a["dim"])
    if op == "log_softmax":
        return t.log_softmax(x[0], dim=a["dim"])
    if op == "conv2d":
        return t.nn.functional.conv2d(x[0], x[1], x[2] if len(x) > 2 else None, stride=a["stride"],
                                      padding=a["padding"], dilation=a["dilation"], groups=a["groups"])
    if op == "max_pool2d":
        return t.nn.functional.max_pool2d(x[0], a["kernel"], a["stride"], a["padding"],
                                          a["dilation"], ceil_mode=a["ceil"])
    if op == "avg_pool2d":
        return t.nn.functional.avg_pool2d(x[0], a["kernel"], a["stride"], a["padding"],
                                          ceil_mode=a["ceil"], count_include_pad=a["include_pad"])
    if op == "gather":
        return t.gather(x[0], a["dim"], x[1])
    if op == "index_select":
        return t.index_select(x[0], a["dim"], x[1])
    if op == "cat":
        return t.cat(x, dim=a["dim"])
    if op == "permute_contiguous":
        return x[0].permute(a["perm"]).contiguous()
    raise ValueError("unknown op " + op)


def main(d):
    with open(os.path.join(d, "cases.jsonl")) as f:
        for line in f:
            case = json.loads(line)
            inputs = [load(d, n) for n in case["inputs"]]
            try:
                out = run(case["op"], inputs, case.get("args", {}))
                np.save(os.path.join(d, "out_%d.npy" % case["id"]), out.numpy())
            except Exception as e:  # reported by the C++ side, next to ember's outcome
                with open(os.path.join(d, "err_%d.txt" % case["id"]), "w") as g:
                    g.write(str(e))


if __name__ == "__main__":
    main(sys.argv[1])
