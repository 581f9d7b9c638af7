"""Public PyTorch programs as written (tests/programs/suite: pytorch/examples and nanoGPT, each file
naming its origin and any edit), run by PyTorch 1.13 and by ember (`python -m ember.run`) on the
same data in the same test; each run must finish, and ember's final metric must be within the
program's tolerance of PyTorch's (the two start from different random weights, so the tolerances
are those of two PyTorch runs with different seeds, not of equal numbers). The programs, their
data and their tolerances are tests/programs/runner.py's, shared with bench/programs_bench.py.
The whole file runs in about two minutes."""
import os
import re
import sys

import pytest

import ember
from conftest import source_dir

sys.path.insert(0, os.path.join(source_dir(), "tests", "programs"))
import runner  # noqa: E402
from runner import CASES, CORPUS, NANOGPT, SUITE, last  # noqa: E402


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    if not os.path.isdir(runner.FASHION):
        pytest.skip("needs Debian's dataset-fashion-mnist")
    root = tmp_path_factory.mktemp("programs")
    runner.prepare(str(root))
    return root


def run(lib, program, args, cwd):
    # This test's ember, wherever the program runs from; one thread each, as CI's two cores allow.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    return runner.run(lib, program, args, cwd, runner.environment(package_root))


def agrees(ours, theirs, tolerance):
    kind, tol = tolerance
    if kind == "max":
        return ours <= tol and theirs <= tol
    diff = abs(ours - theirs) if kind == "abs" else abs(ours - theirs) / abs(theirs)
    return diff <= tol


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_program_reaches_pytorchs_result(workdir, case):
    _, program, args, where, pattern, tolerance = case
    path = os.path.join(SUITE, program)
    theirs = last(pattern, run("torch", path, args, workdir / where))
    ours = last(pattern, run("ember", path, args, workdir / where))
    assert agrees(ours, theirs, tolerance), f"ember {ours} against PyTorch {theirs} ({tolerance})"


def test_nanogpt_trains_shakespeare_char(workdir):
    _, program, args, where, pattern, tolerance = NANOGPT
    ng = workdir / where
    theirs = last(pattern, run("torch", program, args + ["--out_dir=out_torch"], ng))
    ours = last(pattern, run("ember", program, args + ["--out_dir=out_ember"], ng))
    assert agrees(ours, theirs, tolerance), f"ember {ours} against PyTorch {theirs}"
    assert ours < 2.6  # from ln 65 = 4.17


def test_nanogpt_with_compile_true_logs_the_same_losses(workdir):
    # train.py's default: the model compiled. ember traces its forward once per signature and
    # replays it, so every logged loss is the eager run's, digit for digit.
    _, program, args, where, _, _ = NANOGPT
    short = [a for a in args if not a.startswith(("--max_iters", "--lr_decay_iters",
                                                   "--eval_interval", "--log_interval",
                                                   "--compile"))]
    short += ["--max_iters=60", "--lr_decay_iters=60", "--eval_interval=30", "--log_interval=10"]
    ng = workdir / where
    logs = {c: run("ember", program, short + [f"--compile={c}", f"--out_dir=out_c{c}"], ng)
            for c in ("False", "True")}
    losses = {c: re.findall(r"loss ([0-9.]+)", out) for c, out in logs.items()}
    assert losses["True"] and losses["True"] == losses["False"], losses


@pytest.mark.parametrize("program", ["single_gpu.py", "multigpu.py"])
def test_ddp_tutorial_series(workdir, program):
    path = os.path.join(SUITE, "ddp-tutorial-series", program)
    out = run("ember", path, ["2", "1"], workdir / "w")
    assert "Epoch 1" in out and "Training checkpoint saved" in out


# PyTorch's tutorials that need no download (tests/programs/corpus/tutorials, as published):
# they run to their end under ember. (polynomial_autograd.py as published assigns 0. to .grad,
# a TypeError in PyTorch too.)
TUTORIALS = ["tensorqs_tutorial.py", "autogradqs_tutorial.py", "buildmodel_tutorial.py",
             "tensor_tutorial.py", "autograd_tutorial.py",
             "polynomial_custom_function.py", "polynomial_module.py", "polynomial_nn.py",
             "polynomial_optim.py", "dynamic_net.py", "pytorch_tutorial.py",
             "deep_learning_tutorial.py", "word_embeddings_tutorial.py",
             "neural_networks_tutorial.py", "sequence_models_tutorial.py",
             "data_parallel_tutorial.py"]


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_tutorial_runs(workdir, tutorial):
    run("ember", os.path.join(CORPUS, "tutorials", tutorial), [], workdir / "w")
